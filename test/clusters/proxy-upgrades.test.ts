import { afterAll, describe, expect, test } from 'bun:test'
import YAML from 'yaml'
import { startSession } from '../../src/identity/sessions/service'
import { mintToken } from '../../src/identity/tokens/service'
import { startEmulator } from '../../src/kube-emulator'
import { BunWebSocket } from '../../src/net/tunnel/client-socket'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { importAs, importBody, WEBSOCKET_UPGRADE } from './support'

// Who may exec, attach and port-forward, and what the platform sends the member before it knows.
// The member records every request that reaches it: a refusal must leave its log untouched.

const seen: string[] = []
const member = await startEmulator({ tls: true, seed: true, log: (line) => seen.push(line) })
afterAll(() => member.stop())

interface Lab {
  t: TestApp
  base: string
  alice: TestUser
  /** A running pod of the seeded `demo` namespace. */
  pod: string
}

/** An app on a real port (upgrades need the server), alice's cluster `dev`. */
async function lab(): Promise<Lab> {
  const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  const [alice] = await t.users('alice')
  expect((await importAs(t, alice!, 'alice', importBody(member, 'dev'))).status).toBe(201)
  const pods = await fetch(`${member.url}/api/v1/namespaces/demo/pods?labelSelector=app%3Dapi`, {
    headers: { authorization: `Bearer ${member.token}` },
    tls: { ca: member.caCertPem },
  } as RequestInit)
  const pod = ((await pods.json()) as { items: { metadata: { name: string } }[] }).items[0]!.metadata.name
  return { t, base: await t.listen(), alice: alice!, pod }
}

/** The token of the kubeconfig `who` downloads (`query`: `?readonly=true` or nothing). */
async function kubeconfigToken(t: TestApp, who: TestUser, path: string, query = ''): Promise<string> {
  const res = await t.as(who).get(`/api/v1/clustersv2/${path}/kubeconfig${query}`)
  expect(res.status).toBe(200)
  return (YAML.parse(await res.text()) as { users: { user: { token: string } }[] }).users[0]!.user.token
}

const EXEC_QUERY = 'command=id&stdout=true'

/** The paths of one pod's upgrade subresources on both path families. */
const upgradePaths = (cluster: string, pod: string) => [
  `/api/v1/clusters/${cluster}/k8s/api/v1/namespaces/demo/pods/${pod}/exec?${EXEC_QUERY}`,
  `/api/v1/clusters/${cluster}/k8s/api/v1/namespaces/demo/pods/${pod}/attach?stdout=true`,
  `/api/v1/clusters/${cluster}/k8s/api/v1/namespaces/demo/pods/${pod}/portforward?ports=80`,
  `/api/v1/clusters/${cluster}/k8s/api/v1/namespaces/demo/pods/${pod}/ex%65c?${EXEC_QUERY}`,
  `/api/v1/clusters/${cluster}/proxy/core/v1/namespaces/demo/pods/${pod}/exec?${EXEC_QUERY}`,
  `/api/v1/clusters/${cluster}/proxy/core/v1/namespaces/demo/pods/${pod}/attach?stdout=true`,
  `/api/v1/clusters/${cluster}/proxy/core/v1/namespaces/demo/pods/${pod}/portforward?ports=80`,
]

/** Upgrades that are no pod subresource: the kubelet's exec through a node's proxy, a watch over a WebSocket. */
const otherUpgrades = (cluster: string, pod: string) => [
  `/api/v1/clusters/${cluster}/k8s/api/v1/nodes/node-1/proxy/exec/demo/${pod}/app?${EXEC_QUERY}`,
  `/api/v1/clusters/${cluster}/k8s/api/v1/namespaces/demo/pods?watch=true`,
  `/api/v1/clusters/${cluster}/proxy/core/v1/namespaces/demo/pods?watch=true`,
]

/** Sends `path` as a WebSocket upgrade (or, with `headers` replacing them, as anything else) and reports the status. */
const ask = async (
  l: Lab,
  path: string,
  credential: Record<string, string>,
  headers: Record<string, string> = WEBSOCKET_UPGRADE,
  method = 'GET',
) => (await fetch(`${l.base}${path}`, { method, headers: { ...credential, ...headers } })).status

/** Runs `fn` and answers what reached the member meanwhile. */
async function memberSaw(fn: () => Promise<unknown>): Promise<string[]> {
  const before = seen.length
  await fn()
  return seen.slice(before)
}

describe('exec, attach and port-forward need write access (24.2)', () => {
  test("a read-only kubeconfig's token asks for every upgrade subresource on both path families → 403, and nothing reaches the member", async () => {
    const l = await lab()
    const token = await kubeconfigToken(l.t, l.alice, 'alice/dev', '?readonly=true')
    const statuses: Record<string, number> = {}
    const reached = await memberSaw(async () => {
      for (const path of upgradePaths('alice/dev', l.pod)) {
        statuses[`upgrade ${path}`] = await ask(l, path, { authorization: `Bearer ${token}` })
        // The same GET without the upgrade is answered by the lean read route.
        statuses[`plain ${path}`] = await ask(l, path, { authorization: `Bearer ${token}` }, {})
      }
      for (const path of otherUpgrades('alice/dev', l.pod))
        statuses[`upgrade ${path}`] = await ask(l, path, { authorization: `Bearer ${token}` })
    })
    expect(Object.entries(statuses).filter(([, status]) => status !== 403)).toEqual([])
    expect(Object.keys(statuses)).toHaveLength(17)
    expect(reached).toEqual([])
  })

  test('the same token reads a pod named "exec" (a name is no subresource): the member answers', async () => {
    const l = await lab()
    const token = await kubeconfigToken(l.t, l.alice, 'alice/dev', '?readonly=true')
    for (const path of ['/k8s/api/v1/namespaces/demo/pods/exec', '/proxy/core/v1/namespaces/demo/pods/exec']) {
      const res = await fetch(`${l.base}/api/v1/clusters/alice/dev${path}`, { headers: { authorization: `Bearer ${token}` } })
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'pods "exec" not found' })
    }
  })

  test('a read:cluster token in the query (how browsers authenticate a WebSocket) → 403 before the member', async () => {
    const l = await lab()
    const { plaintext } = await mintToken(l.t.deps.db, l.alice.user.id, { name: 'reader', scopes: ['read:cluster'] })
    const reached = await memberSaw(async () => {
      const path = `${upgradePaths('alice/dev', l.pod)[0]}&access_token=${plaintext}`
      expect(await ask(l, path, {})).toBe(403)
    })
    expect(reached).toEqual([])
  })

  test('a member of a team granted the cluster with read → 403 on every upgrade subresource; a write team member execs', async () => {
    const l = await lab()
    const [rita, will] = await l.t.users('rita', 'will')
    await makeOrg(l.t, 'acme', { owner: l.alice })
    expect((await importAs(l.t, l.alice, 'acme', importBody(member, 'prod'))).status).toBe(201)
    for (const [name, permission, who] of [
      ['readers', 'read', rita!],
      ['writers', 'write', will!],
    ] as const) {
      const team = await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name, permission })).json()
      await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/members/${who.name}`)
      await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/clusters/prod`)
    }
    const reached = await memberSaw(async () => {
      for (const path of [...upgradePaths('acme/prod', l.pod), ...otherUpgrades('acme/prod', l.pod)])
        expect(`${path} ${await ask(l, path, { authorization: `token ${rita!.token}` })}`).toBe(`${path} 403`)
    })
    expect(reached).toEqual([])
    expect(await execOutput(l, `/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/pods/${l.pod}/exec`, will!.token)).toBe('ok\n')
  })

  test("a write kubeconfig's token execs on both path families", async () => {
    const l = await lab()
    const token = await kubeconfigToken(l.t, l.alice, 'alice/dev')
    for (const family of ['k8s/api/v1', 'proxy/core/v1'])
      expect(await execOutput(l, `/api/v1/clusters/alice/dev/${family}/namespaces/demo/pods/${l.pod}/exec`, token)).toBe('ok\n')
  })
})

describe('only a WebSocket upgrade reaches an exec (24.4)', () => {
  test('a GET exec with only the session cookie (a cross-site navigation), no Upgrade and no Origin → 400 on both families, the member never asked', async () => {
    const l = await lab()
    const s = await startSession(l.t.deps.db, l.alice.user, { ip: '', userAgent: '', remember: false }, l.t.clock.seconds())
    const cookie = { cookie: `platform_session=${s.secret}` }
    const reached = await memberSaw(async () => {
      for (const family of ['k8s/api/v1', 'proxy/core/v1'])
        expect(
          await ask(l, `/api/v1/clusters/alice/dev/${family}/namespaces/demo/pods/${l.pod}/exec?command=touch&command=/pwned`, cookie, {}),
        ).toBe(400)
    })
    expect(reached).toEqual([])
  })

  test('anything but a valid WebSocket upgrade to an upgrade subresource → 400 before the member (token callers too)', async () => {
    const l = await lab()
    const credential = { authorization: `token ${l.alice.token}` }
    const { 'sec-websocket-key': _key, ...noKey } = WEBSOCKET_UPGRADE
    const cases: [string, Record<string, string>, string][] = [
      ['no upgrade at all', {}, 'GET'],
      ["kubectl's SPDY fallback", { upgrade: 'SPDY/3.1', connection: 'Upgrade', 'x-stream-protocol-version': 'v4.channel.k8s.io' }, 'POST'],
      ['a WebSocket upgrade without its key', noKey, 'GET'],
      ['a WebSocket upgrade of another version', { ...WEBSOCKET_UPGRADE, 'sec-websocket-version': '8' }, 'GET'],
      ['a POST WebSocket upgrade', WEBSOCKET_UPGRADE, 'POST'],
    ]
    const reached = await memberSaw(async () => {
      for (const path of upgradePaths('alice/dev', l.pod))
        for (const [name, headers, method] of cases)
          expect(`${name} ${path} ${await ask(l, path, credential, headers, method)}`).toBe(`${name} ${path} 400`)
    })
    expect(reached).toEqual([])
  })
})

/** Runs `echo ok` over a v5 WebSocket on `path` with `token`; the text of its stdout. */
async function execOutput(l: Lab, path: string, token: string): Promise<string> {
  const url = `${l.base.replace('http', 'ws')}${path}?command=echo&command=ok&stdout=true`
  const socket = new BunWebSocket(url, {
    protocols: ['v5.channel.k8s.io'],
    headers: { authorization: `token ${token}` },
  })
  socket.binaryType = 'arraybuffer'
  let out = ''
  await new Promise((settle) => {
    socket.addEventListener('message', (event) => {
      const bytes = new Uint8Array(event.data as ArrayBuffer)
      if (bytes[0] === 1) out += new TextDecoder().decode(bytes.subarray(1))
    })
    socket.addEventListener('close', settle)
  })
  return out
}

describe("the member's refusal of an exec passes through (30.5)", () => {
  /** The answer to a WebSocket exec upgrade on `path` by alice (the member will not switch). */
  const refused = async (l: Lab, path: string) => {
    const res = await fetch(`${l.base}${path}`, { headers: { authorization: `token ${l.alice.token}`, ...WEBSOCKET_UPGRADE } })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  test("exec on a pod that does not exist → the member's 404 and its Status, on both families", async () => {
    const l = await lab()
    for (const family of ['k8s/api/v1', 'proxy/core/v1']) {
      const { status, body } = await refused(l, `/api/v1/clusters/alice/dev/${family}/namespaces/demo/pods/absent/exec?${EXEC_QUERY}`)
      expect(status).toBe(404)
      expect(body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'pods "absent" not found' })
    }
  })

  test("exec the member finds invalid (no command, a container the pod does not have) → the member's 400 and its Status", async () => {
    const l = await lab()
    const base = `/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/pods/${l.pod}/exec`
    const noCommand = await refused(l, `${base}?stdout=true`)
    expect(noCommand).toMatchObject({
      status: 400,
      body: { kind: 'Status', message: 'you must specify at least one command for the container' },
    })
    const noContainer = await refused(l, `${base}?${EXEC_QUERY}&container=nope`)
    expect(noContainer.status).toBe(400)
    expect(noContainer.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' })
    expect(String(noContainer.body.message)).toContain('nope')
  })
})
