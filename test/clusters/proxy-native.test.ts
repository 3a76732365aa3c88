import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { UpgradeMessages } from '../../src/http/websocket-upgrade'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { PASSWORD, type TestUser, tempDir } from '../support/app'
import { eventually } from '../support/wait'
import { type KubectlLab, kubectlLab, runKubectl } from './kubectl-lab'
import { importAs, importBody } from './support'

// The member cluster, over TLS; it records what reaches it, so tests can prove what did not.
const seen: string[] = []
const member = await startEmulator({
  tls: true,
  seed: true,
  log: (line) => {
    seen.push(line)
  },
})
afterAll(() => member.stop())

let caPem = ''
/** fetch that trusts the platform's test CA. */
const call = (url: string, init: RequestInit = {}) => fetch(url, { ...init, tls: { ca: caPem } } as RequestInit)

type Lab = KubectlLab

/** An app on a real port (kubectl needs one), alice's cluster `dev` imported, and her kubeconfig from the registry. */
async function lab(): Promise<Lab> {
  const l = await kubectlLab(member)
  caPem = l.caPem
  return l
}

const kubectl = (l: Lab, ...args: string[]) => runKubectl(l, l.kubeconfig, ...args)

describe('kubectl through the native passthrough', () => {
  test("get pods -A lists the member's pods", async () => {
    const l = await lab()
    const { out, code, err } = await kubectl(l, 'get', 'pods', '-A', '-o', 'name')
    expect(err).toBe('')
    expect(code).toBe(0)
    expect(out).toContain('pod/web-')
  })

  test('apply, get, delete a ConfigMap', async () => {
    const l = await lab()
    const file = join(tempDir(), 'cm.yaml')
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: through-proxy\n  namespace: demo\ndata:\n  a: "1"\n')
    expect((await kubectl(l, 'apply', '-f', file)).out).toContain('configmap/through-proxy created')
    expect((await kubectl(l, 'apply', '--server-side', '-f', file)).code).toBe(0)
    expect((await kubectl(l, 'get', 'configmap', 'through-proxy', '-n', 'demo', '-o', 'jsonpath={.data.a}')).out).toBe('1')
    expect((await kubectl(l, 'delete', 'configmap', 'through-proxy', '-n', 'demo')).code).toBe(0)
  })

  test('logs -f streams lines as they come', async () => {
    const l = await lab()
    const pod = (await kubectl(l, 'get', 'pods', '-n', 'demo', '-l', 'app=api', '-o', 'name')).out.trim().split('\n')[0]!
    const child = Bun.spawn([l.t.config.kubectlPath, '--kubeconfig', l.kubeconfig, 'logs', '-f', '-n', 'demo', pod], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const reader = child.stdout.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value).length).toBeGreaterThan(0)
    child.kill()
  })

  test('get -w delivers a change made afterwards', async () => {
    const l = await lab()
    const watching = member.subscribers()
    const child = Bun.spawn([l.t.config.kubectlPath, '--kubeconfig', l.kubeconfig, 'get', 'configmaps', '-n', 'demo', '-w', '-o', 'name'], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const reader = child.stdout.getReader()
    let text = ''
    // The change is made once kubectl's watch has reached the member through the proxy.
    await eventually(() => member.subscribers() > watching, 10_000)
    await kubectl(l, 'create', 'configmap', 'watched', '-n', 'demo')
    while (!text.includes('configmap/watched')) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    child.kill()
    expect(text).toContain('configmap/watched')
    await kubectl(l, 'delete', 'configmap', 'watched', '-n', 'demo')
  })

  test('exec runs a command and carries its exit code back', async () => {
    const l = await lab()
    const pod = (await kubectl(l, 'get', 'pods', '-n', 'demo', '-l', 'app=api', '-o', 'name')).out.trim().split('\n')[0]!
    const ok = await kubectl(l, 'exec', '-n', 'demo', pod, '--', 'echo', 'through-the-platform')
    expect(ok.err).toBe('')
    expect(ok.out.trim()).toBe('through-the-platform')
    const failing = await kubectl(l, 'exec', '-n', 'demo', pod, '--', 'sh', '-c', 'exit 3')
    expect(failing.code).toBe(3)
  })

  test("exec into a pod that does not exist → kubectl shows the member's NotFound", async () => {
    const l = await lab()
    const missing = await kubectl(l, 'exec', '-n', 'demo', 'no-such-pod', '--', 'true')
    expect(missing.code).not.toBe(0)
    expect(missing.err).toContain('not found')
  })

  test('auth can-i answers through the proxy', async () => {
    const l = await lab()
    const { out } = await kubectl(l, 'auth', 'can-i', 'list', 'pods', '-n', 'demo')
    expect(out.trim()).toBe('yes')
  })
})

describe('passthrough hygiene and access', () => {
  const get = (l: Lab, who: TestUser, path: string, headers: Record<string, string> = {}) =>
    call(`${l.base}/api/v1/clusters/alice/dev/k8s${path}`, { headers: { authorization: `token ${who.token}`, ...headers } })

  test('another user → 404, and nothing reaches the member', async () => {
    const l = await lab()
    const before = seen.length
    expect((await get(l, l.bob, '/api/v1/namespaces')).status).toBe(404)
    expect(seen.length).toBe(before)
  })

  test("an unknown cluster → 404 with the platform's reason in a Status", async () => {
    const l = await lab()
    const res = await call(`${l.base}/api/v1/clusters/alice/nope/k8s/api/v1/namespaces`, {
      headers: { authorization: `token ${l.alice.token}` },
    })
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ kind: 'Status', message: 'cluster not found' })
  })

  for (const path of [
    '/api/v1/namespaces/demo%2fsecrets',
    '/api/v1/namespaces/demo%2Fsecrets',
    '/api/v1/namespaces/demo%00/pods',
    '/api/v1/namespaces/%252e%252e/pods',
    '/api/v1/namespaces/..%2f..%2fsecrets',
  ])
    test(`an encoded path trick ${path} → 422`, async () => {
      const l = await lab()
      expect((await get(l, l.alice, path)).status).toBe(422)
    })

  test("a relayed answer carries the platform's X-Request-Id and nosniff beside the member's headers, its body byte for byte", async () => {
    const l = await lab()
    const res = await get(l, l.alice, '/api/v1/namespaces/demo', { 'x-request-id': 'trace-proxy-1' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toBe('trace-proxy-1')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-type')).toBe('application/json')
    const direct = await fetch(`${member.url}/api/v1/namespaces/demo`, {
      headers: { authorization: `Bearer ${member.token}` },
      tls: { ca: member.caCertPem },
    } as RequestInit)
    expect(await res.text()).toBe(await direct.text())
  })

  test("the member's own errors pass through unchanged (404 Status)", async () => {
    const l = await lab()
    const res = await get(l, l.alice, '/api/v1/namespaces/demo/configmaps/absent')
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'NotFound' })
  })

  test('client Authorization, Cookie and Impersonate-* never reach the member', async () => {
    const l = await lab()
    // The member would honour impersonation by its admin token (mallory may do nothing there); as
    // the platform drops the header, the access review is answered for the admin.
    const res = await get(l, l.alice, '/api/v1/namespaces', { 'impersonate-user': 'mallory', cookie: 'x=1' })
    expect(res.status).toBe(200)
    const review = await call(`${l.base}/api/v1/clusters/alice/dev/k8s/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { authorization: `token ${l.alice.token}`, 'impersonate-user': 'mallory', 'content-type': 'application/json' },
      body: JSON.stringify({ spec: { resourceAttributes: { verb: 'delete', resource: 'secrets', namespace: 'demo' } } }),
    })
    expect(((await review.json()) as { status?: { allowed?: boolean } }).status?.allowed).toBe(true)
  })

  test('a read team member may list but not create (403), and a write one may', async () => {
    const l = await lab()
    const [rita, will] = await l.t.users('rita', 'will')
    await makeOrg(l.t, 'acme', { owner: l.alice })
    expect((await importAs(l.t, l.alice, 'acme', importBody(member, 'prod'))).status).toBe(201)
    const team = async (name: string, permission: string, who: TestUser) => {
      const created = await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name, permission })).json()
      await l.t.as(l.alice).send('PUT', `/api/v1/teams/${created.id}/members/${who.name}`)
      await l.t.as(l.alice).send('PUT', `/api/v1/teams/${created.id}/clusters/prod`)
    }
    await team('readers', 'read', rita!)
    await team('writers', 'write', will!)
    const send = (who: TestUser, method: string, body?: unknown) =>
      call(`${l.base}/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps`, {
        method,
        headers: { authorization: `token ${who.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    expect((await send(rita!, 'GET')).status).toBe(200)
    expect((await send(rita!, 'POST', { metadata: { name: 'by-reader' } })).status).toBe(403)
    expect((await send(will!, 'POST', { metadata: { name: 'by-writer' } })).status).toBe(201)
  })

  test("a cookie-authenticated exec, attach or port-forward upgrade from another site's page → 403 on both families (cross-site WebSocket hijacking)", async () => {
    const l = await lab()
    const signIn = await call(`${l.base}/api/v1/user/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: PASSWORD }),
    })
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    const upgrade = (origin: string, path: string) =>
      call(`${l.base}/api/v1/clusters/alice/dev/${path}`, {
        headers: {
          cookie,
          origin,
          upgrade: 'websocket',
          connection: 'Upgrade',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-protocol': 'v5.channel.k8s.io',
        },
      })
    for (const family of ['k8s/api/v1', 'proxy/core/v1'])
      for (const session of ['exec?command=true', 'attach?stdout=true', 'portforward?ports=80']) {
        const path = `${family}/namespaces/demo/pods/x/${session}`
        const foreign = await upgrade('https://evil.example', path)
        expect(`${path} ${foreign.status}`).toBe(`${path} 403`)
        expect((await foreign.json()).message).toBe(UpgradeMessages.crossOrigin)
        // From the platform's own origin the upgrade is admitted: the member answers (no such pod).
        expect(`${path} ${(await upgrade(l.base, path)).status}`).toBe(`${path} 404`)
      }
  })
})
