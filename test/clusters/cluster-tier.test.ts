import { afterAll, describe, expect, test } from 'bun:test'
import YAML from 'yaml'
import { KubeconfigMessages } from '../../src/clusters/service'
import { mintToken } from '../../src/identity/tokens/service'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { registrationFixture, WEBSOCKET_UPGRADE } from './support'

// The cluster tier as a table: every kind of caller against every kind of route that names a
// cluster, proven against the member's own request log (a refusal never reaches it).

const seen: string[] = []
const member = await startEmulator({ tls: true, seed: true, log: (line) => seen.push(line) })
afterAll(() => member.stop())

type Caller =
  | 'anonymous'
  | 'outsider'
  | 'org member without a grant'
  | 'read team'
  | 'write team'
  | 'org admin'
  | 'org owner'
  | 'site admin'
  | "owner's read:cluster token"
  | "owner's write:cluster token"
  | "owner's read:user token"

interface World {
  t: TestApp
  base: string
  /** The Authorization header of each caller (none for anonymous). */
  credential: Record<Caller, Record<string, string>>
}

/** acme (alice owner, ada admin, nora member), its cluster `prod` on the member, granted to a read team (rita) and a write team (will). */
async function world(): Promise<World> {
  const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  const [alice, ada, nora, rita, will, carol] = await t.users('alice', 'ada', 'nora', 'rita', 'will', 'carol')
  const acme = await makeOrg(t, 'acme', { owner: alice!, admins: [ada!], members: [nora!] })
  await registrationFixture(t, acme.org, 'prod', {
    server: member.url,
    caData: member.caCertPem!,
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: member.token },
  })
  for (const [name, permission, who] of [
    ['readers', 'read', rita!],
    ['writers', 'write', will!],
  ] as const) {
    const team = await (await t.as(alice!).send('POST', '/api/v1/orgs/acme/teams', { name, permission })).json()
    expect((await t.as(alice!).send('PUT', `/api/v1/teams/${team.id}/members/${who.name}`)).status).toBe(204)
    expect((await t.as(alice!).send('PUT', `/api/v1/teams/${team.id}/clusters/prod`)).status).toBe(204)
  }
  const tokenOf = (who: TestUser) => ({ authorization: `token ${who.token}` })
  const scoped = async (scope: string) => ({
    authorization: `token ${(await mintToken(t.deps.db, alice!.user.id, { name: scope, scopes: [scope] })).plaintext}`,
  })
  return {
    t,
    base: await t.listen(),
    credential: {
      anonymous: {},
      outsider: tokenOf(carol!),
      'org member without a grant': tokenOf(nora!),
      'read team': tokenOf(rita!),
      'write team': tokenOf(will!),
      'org admin': tokenOf(ada!),
      'org owner': tokenOf(alice!),
      'site admin': tokenOf(await t.admin()),
      "owner's read:cluster token": await scoped('read:cluster'),
      "owner's write:cluster token": await scoped('write:cluster'),
      "owner's read:user token": await scoped('read:user'),
    },
  }
}

/** One route of the tier: a request, and whether it is the kind that reaches the member when admitted. */
interface Operation {
  name: string
  method: string
  path: string
  body?: unknown
  headers?: Record<string, string>
}

// In this order: the last one removes the registration.
const OPERATIONS: Operation[] = [
  { name: 'read the registration', method: 'GET', path: '/api/v1/clustersv2/acme/prod' },
  { name: 'read-only kubeconfig', method: 'GET', path: '/api/v1/clustersv2/acme/prod/kubeconfig?readonly=true' },
  { name: 'kubeconfig', method: 'GET', path: '/api/v1/clustersv2/acme/prod/kubeconfig' },
  { name: 'change the registration', method: 'PATCH', path: '/api/v1/clustersv2/acme/prod', body: { displayName: 'Production' } },
  { name: 'list through k8s', method: 'GET', path: '/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps' },
  { name: 'list through proxy', method: 'GET', path: '/api/v1/clusters/acme/prod/proxy/core/v1/namespaces/demo/configmaps' },
  {
    name: 'access review',
    method: 'POST',
    path: '/api/v1/clusters/acme/prod/k8s/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: { spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'demo' } } },
  },
  {
    name: 'create through k8s',
    method: 'POST',
    path: '/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps',
    body: { metadata: { generateName: 'tier-' } },
  },
  {
    name: 'delete through proxy',
    method: 'DELETE',
    path: '/api/v1/clusters/acme/prod/proxy/core/v1/namespaces/demo/configmaps/absent',
  },
  {
    name: 'exec (a pod that does not exist)',
    method: 'GET',
    path: '/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/pods/absent/exec?command=id&stdout=true',
    headers: WEBSOCKET_UPGRADE,
  },
  { name: 'remove the registration', method: 'DELETE', path: '/api/v1/clustersv2/acme/prod' },
]

/** What each caller gets: a status of the platform's, or `member` when the request reached the member (whose answer it is). */
type Outcome = number | 'member'
const everywhere = (outcome: Outcome) => Object.fromEntries(OPERATIONS.map((op) => [op.name, outcome]))
const manager: Record<string, Outcome> = {
  'read the registration': 200,
  'read-only kubeconfig': 200,
  kubeconfig: 200,
  'change the registration': 200,
  'list through k8s': 'member',
  'list through proxy': 'member',
  'access review': 'member',
  'create through k8s': 'member',
  'delete through proxy': 'member',
  'exec (a pod that does not exist)': 'member',
  'remove the registration': 204,
}
const writer = { ...manager, 'change the registration': 403, 'remove the registration': 403 }
const reader = {
  ...writer,
  kubeconfig: 403,
  'create through k8s': 403,
  'delete through proxy': 403,
  'exec (a pod that does not exist)': 403,
}

const EXPECTED: Record<Caller, Record<string, Outcome>> = {
  anonymous: everywhere(401),
  outsider: everywhere(404),
  'org member without a grant': everywhere(404),
  'read team': reader,
  'write team': writer,
  'org admin': manager,
  'org owner': manager,
  'site admin': manager,
  "owner's read:cluster token": reader,
  "owner's write:cluster token": manager,
  "owner's read:user token": everywhere(403),
}

describe('route × caller matrix of the cluster tier', () => {
  for (const [caller, expected] of Object.entries(EXPECTED) as [Caller, Record<string, Outcome>][])
    test(`${caller}: ${Object.entries(expected)
      .map(([op, outcome]) => `${op} ${outcome}`)
      .join(', ')}`, async () => {
      const w = await world()
      const outcomes: Record<string, Outcome> = {}
      for (const op of OPERATIONS) {
        const before = seen.length
        const res = await fetch(`${w.base}${op.path}`, {
          method: op.method,
          headers: { ...w.credential[caller], ...(op.body ? { 'content-type': 'application/json' } : {}), ...op.headers },
          body: op.body === undefined ? undefined : JSON.stringify(op.body),
        })
        await res.arrayBuffer()
        // A refusal of the platform's own never reaches the member; an admitted proxy call always does.
        // (The registry's health probes ask /version and nodes; no operation here does.)
        const reached = seen.slice(before).some((line) => line.includes('/namespaces/demo') || line.includes('/selfsubjectaccessreviews'))
        outcomes[op.name] = reached ? 'member' : res.status
      }
      expect(outcomes).toEqual(expected)
    })
})

/** What the kubeconfig route answers `credential`: the token of the kubeconfig, or the refusal's message. */
async function kubeconfigToken(
  w: World,
  credential: Record<string, string>,
  query = '',
): Promise<{ status: number; token?: string; message?: string }> {
  const res = await fetch(`${w.base}/api/v1/clustersv2/acme/prod/kubeconfig${query}`, { headers: credential })
  if (res.status !== 200) return { status: res.status, message: ((await res.json()) as { message: string }).message }
  return { status: 200, token: (YAML.parse(await res.text()) as { users: { user: { token: string } }[] }).users[0]!.user.token }
}

describe('a kubeconfig never holds more than its caller (24.3)', () => {
  test('a read:cluster token asks for a kubeconfig without readonly → 403 saying to ask for a read-only one; no token is minted', async () => {
    const w = await world()
    const asked = await kubeconfigToken(w, w.credential["owner's read:cluster token"])
    expect(asked).toEqual({ status: 403, message: KubeconfigMessages.readOnlyCredential })
    const tokens = await (
      await fetch(`${w.base}/api/v1/user/settings/tokens/access-tokens/`, { headers: w.credential['org owner'] })
    ).json()
    expect((tokens as { name: string }[]).map((k) => k.name).filter((name) => name.startsWith('kubeconfig-'))).toEqual([])
  })

  test('the read-only kubeconfig of a read:cluster token holds read:cluster only: it reads, and its create is refused before the member', async () => {
    const w = await world()
    const { token } = await kubeconfigToken(w, w.credential["owner's read:cluster token"], '?readonly=true')
    const bearer = { authorization: `Bearer ${token}` }
    const list = await fetch(`${w.base}/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps`, { headers: bearer })
    expect(list.status).toBe(200)
    const before = seen.length
    const create = await fetch(`${w.base}/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { generateName: 'minted-' } }),
    })
    expect(create.status).toBe(403)
    expect(seen.slice(before)).toEqual([])
    // Nor can it mint itself a write one.
    expect((await kubeconfigToken(w, bearer)).status).toBe(403)
  })

  test('a write:cluster token and a signed-in password get a write kubeconfig whose token writes', async () => {
    const w = await world()
    for (const credential of [w.credential["owner's write:cluster token"], w.credential['org owner']]) {
      const { token } = await kubeconfigToken(w, credential)
      const create = await fetch(`${w.base}/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { generateName: 'minted-' } }),
      })
      expect(create.status).toBe(201)
    }
  })
})

describe('names that do not decode (30.2)', () => {
  test('every route that takes an owner or a cluster, by every method it takes, with bad percent-encoding in either → 422, never 500', async () => {
    const w = await world()
    const teams = (await (await fetch(`${w.base}/api/v1/orgs/acme/teams`, { headers: w.credential['org owner'] })).json()) as {
      id: number
    }[]
    const routes = w.t.app.routes.filter((r) => /:owner\b|:cluster\b/.test(r.path))
    expect(routes.length).toBeGreaterThan(8)
    const outcomes: string[] = []
    // A read of the proxy is answered by its lean route, anything else by the app's route.
    for (const route of routes)
      for (const method of route.method === 'ALL' ? ['GET', 'POST'] : [route.method])
        for (const bad of ['owner', 'cluster'].filter((param) => route.path.includes(`:${param}`)))
          for (const encoding of ['%ff%fe', '%E0%A4%A']) {
            const path = route.path
              .replace(':owner', bad === 'owner' ? encoding : 'acme')
              .replace(':cluster', bad === 'cluster' ? encoding : 'prod')
              .replace(':teamId', String(teams[0]!.id))
              .replace('*', 'api/v1/namespaces')
            const res = await fetch(`${w.base}${path}`, {
              method,
              headers: { ...w.credential['org owner'], 'content-type': 'application/json' },
              body: ['GET', 'DELETE'].includes(method) ? undefined : '{}',
            })
            outcomes.push(`${method} ${path} → ${res.status}`)
          }
    expect(outcomes.filter((o) => !o.endsWith('→ 422'))).toEqual([])
  })
})
