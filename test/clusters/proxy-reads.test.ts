import { afterAll, describe, expect, test } from 'bun:test'
import { mintToken } from '../../src/identity/tokens/service'
import { startEmulator } from '../../src/kube-emulator'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { eventually } from '../support/wait'
import { clusterLab, importedCluster, registrationFixture } from './support'

// The passthrough's reads are answered before Elysia's lifecycle (http/lean-route.ts); these tests
// hold them to what the app's routes do, and hold every proxy path to the member's query.

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

// A recording front for the member, over TLS: it notes each request's query, then passes it on.
// An exec upgrade is refused (403), as a member without exec would, so the platform asks again over plain HTTP.
const recorded: string[] = []
const frontTls = await generateServerTls(['127.0.0.1'])
const front = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: frontTls.certPem, key: frontTls.keyPem },
  async fetch(request) {
    const url = new URL(request.url)
    recorded.push(`${request.method} ${url.pathname}${url.search}`)
    if (request.headers.get('upgrade'))
      return Response.json({ kind: 'Status', status: 'Failure', code: 403, reason: 'Forbidden' }, { status: 403 })
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
    const headers = new Headers(request.headers)
    headers.delete('host')
    const answer = await fetch(`${member.url}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body,
      tls: { ca: member.caCertPem },
    } as RequestInit)
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json' },
    })
  },
})
afterAll(() => front.stop(true))

/** alice's cluster `dev` is the recording front; the app listens on a real port. */
async function lab() {
  const l = await importedCluster({ url: `https://127.0.0.1:${front.port}`, caCertPem: frontTls.caCertPem, token: member.token })
  return { ...l, base: await l.t.listen() }
}

describe("the platform's own query parameters never reach the member", () => {
  test('a token in the query (token, access_token, percent-encoded) signs the caller in on every proxy path; the member sees the rest of the query only', async () => {
    const l = await lab()
    const token = encodeURIComponent(l.alice.token)
    const paths: [string, string][] = [
      ['GET', `/k8s/api/v1/namespaces/demo/configmaps?limit=5&token=${token}`],
      ['GET', `/k8s/api/v1/namespaces/demo/configmaps?access_token=${token}&limit=5`],
      ['GET', `/k8s/api/v1/namespaces/demo/configmaps?%74oken=${token}&limit=5`],
      ['HEAD', `/k8s/api/v1/namespaces/demo?token=${token}`],
      ['POST', `/k8s/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?token=${token}`],
      ['GET', `/proxy/core/v1/namespaces/demo/configmaps?labelSelector=a%3Db&access_token=${token}`],
    ]
    const before = recorded.length
    for (const [method, path] of paths) {
      const body = method === 'POST' ? JSON.stringify({ spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } }) : undefined
      await fetch(`${l.base}/api/v1/clusters/alice/dev${path}`, {
        method,
        body,
        headers: body ? { 'content-type': 'application/json' } : {},
      })
    }
    // Browsers cannot set headers on a WebSocket: exec is where a query token is the usual credential.
    const exec = new WebSocket(
      `${l.base.replace('http', 'ws')}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/pods/web-0/exec?command=true&access_token=${token}`,
      ['v5.channel.k8s.io'],
    )
    await new Promise((settle) => exec.addEventListener('close', settle))
    // Every request reached the member, so each token signed its caller in (a refusal stays here).
    const seen = recorded.slice(before)
    expect(seen).toEqual([
      'GET /api/v1/namespaces/demo/configmaps?limit=5',
      'GET /api/v1/namespaces/demo/configmaps?limit=5',
      'GET /api/v1/namespaces/demo/configmaps?limit=5',
      'HEAD /api/v1/namespaces/demo',
      'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      'GET /api/v1/namespaces/demo/configmaps?labelSelector=a%3Db',
      'GET /api/v1/namespaces/demo/pods/web-0/exec?command=true',
      'GET /api/v1/namespaces/demo/pods/web-0/exec?command=true',
    ])
  })

  test("sudo is the platform's: an admin's sudo is applied here and not passed on", async () => {
    const l = await lab()
    const root = await l.t.admin()
    const before = recorded.length
    const res = await fetch(`${l.base}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces?sudo=alice&limit=1`, {
      headers: { authorization: `token ${root.token}` },
    })
    expect(res.status).toBe(200)
    expect(recorded.slice(before)).toEqual(['GET /api/v1/namespaces?limit=1'])
  })
})

describe("reads answered before the app's lifecycle refuse as its routes do", () => {
  const PATHS = { k8s: 'k8s/api/v1/namespaces/demo/configmaps/x', proxy: 'proxy/core/v1/namespaces/demo/configmaps/x' }

  /** The answer to `method` on alice's passthrough or spec route: GET (the lean route) or DELETE (the app's route). */
  const ask = async (
    l: Awaited<ReturnType<typeof lab>>,
    method: 'GET' | 'DELETE',
    headers: Record<string, string>,
    cluster = 'dev',
    kind: keyof typeof PATHS = 'k8s',
  ) => {
    const res = await fetch(`${l.base}/api/v1/clusters/alice/${cluster}/${PATHS[kind]}`, {
      method,
      headers: { 'x-request-id': `${method}-1`, ...headers },
    })
    return {
      status: res.status,
      body: (await res.json()) as { message: string; url: string },
      type: res.headers.get('content-type'),
      nosniff: res.headers.get('x-content-type-options'),
      requestId: res.headers.get('x-request-id'),
    }
  }

  test('anonymous, a bad token, another user, an unknown cluster, a password to change: the same status, body and headers on the passthrough and the spec routes', async () => {
    const l = await lab()
    const newbie = await l.t.as(await l.t.admin()).send('POST', '/api/v1/admin/users', {
      username: 'newbie',
      email: 'newbie@example.com',
      password: 'first-password-1',
      must_change_password: true,
    })
    expect(newbie.status).toBe(201)
    const cases: [string, Record<string, string>, string?][] = [
      ['anonymous', {}],
      ['a token nobody has', { authorization: 'token 0123456789abcdef0123456789abcdef01234567' }],
      ['another user', { authorization: `token ${l.bob.token}` }],
      ['an unknown cluster', { authorization: `token ${l.alice.token}` }, 'nope'],
      ['a user who must change their password', { authorization: `Basic ${Buffer.from('newbie:first-password-1').toString('base64')}` }],
    ]
    const before = recorded.length
    for (const kind of ['k8s', 'proxy'] as const)
      for (const [name, headers, cluster] of cases) {
        const read = await ask(l, 'GET', headers, cluster, kind)
        const write = await ask(l, 'DELETE', headers, cluster, kind)
        expect({ kind, name, status: read.status, body: read.body, type: read.type, nosniff: read.nosniff }).toEqual({
          kind,
          name,
          status: write.status,
          body: write.body,
          type: write.type,
          nosniff: write.nosniff,
        })
        expect([401, 403, 404]).toContain(read.status)
        expect([read.requestId, write.requestId]).toEqual(['GET-1', 'DELETE-1'])
      }
    expect(recorded.length).toBe(before)
  })

  test('a token without the cluster scope: 403 naming the scope the method needs (read for GET, write for DELETE)', async () => {
    const l = await lab()
    const { plaintext } = await mintToken(l.t.deps.db, l.alice.user.id, { name: 'user-only', scopes: ['read:user'] })
    const read = await ask(l, 'GET', { authorization: `token ${plaintext}` })
    const write = await ask(l, 'DELETE', { authorization: `token ${plaintext}` })
    expect([read.status, write.status]).toEqual([403, 403])
    expect(read.body.message).toBe('token does not have at least one of required scope(s): [read:cluster]')
    expect(write.body.message).toBe('token does not have at least one of required scope(s): [write:cluster]')
  })

  test('a read writes its request log line, a query token redacted', async () => {
    const l = await lab()
    const res = await fetch(`${l.base}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo?token=${l.alice.token}`, {
      headers: { 'x-request-id': 'lean-log-1' },
    })
    expect(res.status).toBe(200)
    const line = (await l.t.logFor('lean-log-1')).find((entry) => entry.requestId === 'lean-log-1' && entry.event === 'request')
    expect(line).toMatchObject({
      method: 'GET',
      path: '/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo?token=%5Bredacted%5D',
      status: 200,
    })
    expect(l.t.logs.some((entry) => entry.includes(l.alice.token))).toBe(false)
  })
})

test("a watch taken by the lean route outlives the server's idle timeout (the route reaches the server to lift it)", async () => {
  const { t, alice } = await importedCluster(member)
  const server = t.app.listen({ port: 0, hostname: '127.0.0.1', reusePort: false, idleTimeout: 1 })
  afterAll(() => server.stop())
  const port = server.server!.port!
  const watch = await fetch(`http://127.0.0.1:${port}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps?watch=true`, {
    headers: { authorization: `token ${alice.token}` },
  })
  expect(watch.status).toBe(200)
  const reader = watch.body!.getReader()
  const decoder = new TextDecoder()
  let seen = decoder.decode((await reader.read()).value)
  // Idle past the server's 1 s timeout, then a change: a watch still open delivers it. Bun closes idle
  // connections on a coarse timer (measured: within 9 s of a 1 s timeout); a keep-alive connection that
  // served one request after the watch's last byte is cut on the same tick as an unlifted watch, or later.
  await new Promise<void>((cut) => {
    void Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {}, close: () => cut() } }).then((canary) => {
      canary.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')
    })
  })
  const created = await fetch(`${member.url}/api/v1/namespaces/demo/configmaps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { name: 'after-idle' } }),
    tls: { ca: member.caCertPem },
  } as RequestInit)
  expect(created.status).toBe(201)
  while (!seen.includes('after-idle')) {
    const { value, done } = await reader.read()
    if (done) break
    seen += decoder.decode(value)
  }
  expect(seen).toContain('"after-idle"')
  await reader.cancel()
})

test('a client that leaves a slow read: the member sees the platform leave too, and the request log says 499', async () => {
  const { t, alice } = await clusterLab()
  // A member that takes its time with one list and notes when its caller goes away.
  const slowTls = await generateServerTls(['127.0.0.1'])
  const memberSaw: string[] = []
  const slow = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: slowTls.certPem, key: slowTls.keyPem },
    fetch: (request) =>
      new Promise<Response>((answer) => {
        memberSaw.push('asked')
        request.signal.addEventListener('abort', () => memberSaw.push('caller left'))
        // The slowness is the behaviour under test: the caller leaves long before this answer.
        setTimeout(() => answer(Response.json({ kind: 'ConfigMapList', items: [] })), 20_000).unref()
      }),
  })
  afterAll(() => slow.stop(true))
  await registrationFixture(t, alice.user, 'slow', {
    server: `https://127.0.0.1:${slow.port}`,
    caData: slowTls.caCertPem,
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: 'member-token' },
  })
  const base = await t.listen()
  const leaving = new AbortController()
  const read = fetch(`${base}/api/v1/clusters/alice/slow/k8s/api/v1/namespaces/demo/configmaps`, {
    headers: { authorization: `token ${alice.token}`, 'x-request-id': 'left-early-1' },
    signal: leaving.signal,
  }).catch(() => 'aborted')
  await eventually(() => memberSaw.includes('asked'))
  leaving.abort()
  expect(await read).toBe('aborted')
  await eventually(() => memberSaw.includes('caller left'))
  const line = (await t.logFor('left-early-1')).find((entry) => entry.requestId === 'left-early-1' && entry.event === 'request')
  expect(line).toMatchObject({ method: 'GET', status: 499 })
})
