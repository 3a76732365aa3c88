import { afterAll, describe, expect, test } from 'bun:test'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { registrationFixture } from './support'

// What a proxied answer may contain: a member anyone may register answers whatever it likes, and
// whatever it is, no page and no script of it may run on the platform's origin.

const SCRIPT_PAGE = '<!doctype html><html><body><script>fetch("/api/v1/user").then(r => r.text()).then(alert)</script></body></html>'
const SCRIPT_SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.cookie)"><script>alert(document.domain)</script></svg>'

/** A hostile member over TLS: each path answers with the type and body it names, and its own headers. */
const tls = await generateServerTls(['127.0.0.1'])
const hostile = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: tls.certPem, key: tls.keyPem },
  fetch(request) {
    const path = new URL(request.url).pathname
    const own = { 'x-content-type-options': 'sniff-away', 'content-security-policy': "default-src *; script-src 'unsafe-inline'" }
    if (path.endsWith('/page')) return new Response(SCRIPT_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', ...own } })
    if (path.endsWith('/picture')) return new Response(SCRIPT_SVG, { headers: { 'content-type': 'image/svg+xml', ...own } })
    // A stream body: Bun names no type for it (it would call bytes application/octet-stream).
    if (path.endsWith('/untyped')) return new Response(new Blob([SCRIPT_PAGE]).stream(), { headers: own })
    if (path.endsWith('/text')) return new Response('a log line\n', { headers: { 'content-type': 'text/plain', ...own } })
    if (path.endsWith('/yaml')) return new Response('a: 1\n', { headers: { 'content-type': 'application/yaml', ...own } })
    if (path.endsWith('/protobuf'))
      return new Response(new Uint8Array([0x6b, 0x38, 0x73, 0]), {
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf', ...own },
      })
    return Response.json({ kind: 'ConfigMap', metadata: { name: 'x' } }, { headers: own })
  },
})
afterAll(() => hostile.stop(true))

interface Lab {
  t: TestApp
  base: string
  mallory: TestUser
}

/** Mallory registers her cluster `trap` (the hostile member) and shares a link to it. */
async function lab(): Promise<Lab> {
  const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  const [mallory] = await t.users('mallory')
  await registrationFixture(t, mallory!.user, 'trap', {
    server: `https://127.0.0.1:${hostile.port}`,
    caData: tls.caCertPem,
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: 'member-token' },
  })
  return { t, base: await t.listen(), mallory: mallory! }
}

const CONFINED = { 'content-security-policy': "default-src 'none'; sandbox", 'x-content-type-options': 'nosniff' }

/** The headers that decide what a browser does with an answer. */
const browserHeaders = (res: Response) => ({
  'content-security-policy': res.headers.get('content-security-policy'),
  'x-content-type-options': res.headers.get('x-content-type-options'),
  'content-disposition': res.headers.get('content-disposition'),
})

// Every family and shape of a relayed GET: the passthrough (lean and app route), a stream, the spec's routes.
const PATHS = {
  passthrough: (what: string) => `/k8s/api/v1/namespaces/demo/configmaps/${what}`,
  'passthrough, a HEAD': (what: string) => `/k8s/api/v1/namespaces/demo/configmaps/${what}`,
  'passthrough, a stream': (what: string) => `/k8s/api/v1/namespaces/demo/configmaps/${what}?watch=true`,
  "the spec's route": (what: string) => `/proxy/core/v1/namespaces/demo/configmaps/${what}`,
  "the spec's route, with a body": (what: string) => `/proxy/core/v1/namespaces/demo/configmaps/${what}`,
}

describe('a member answers with a page (24.5)', () => {
  for (const [what, type] of [
    ['page', 'text/html; charset=utf-8'],
    ['picture', 'image/svg+xml'],
    // No type from the member: Bun's server names the body application/octet-stream on the wire.
    ['untyped', 'application/octet-stream'],
  ] as const)
    for (const [family, pathOf] of Object.entries(PATHS))
      test(`${what} (${what === 'untyped' ? 'no type' : type}) through ${family} → sandboxed by CSP, nosniff, an attachment; the bytes as sent`, async () => {
        const l = await lab()
        const method = family.includes('HEAD') ? 'HEAD' : family.includes('body') ? 'PUT' : 'GET'
        const res = await fetch(`${l.base}/api/v1/clusters/mallory/trap${pathOf(what)}`, {
          method,
          headers: { authorization: `token ${l.mallory.token}`, ...(method === 'PUT' ? { 'content-type': 'application/json' } : {}) },
          body: method === 'PUT' ? '{}' : undefined,
        })
        expect(res.status).toBe(200)
        expect(browserHeaders(res)).toEqual({ ...CONFINED, 'content-disposition': 'attachment' })
        if (method !== 'HEAD') expect(res.headers.get('content-type')).toBe(type)
        if (method !== 'HEAD') expect(await res.text()).toBe(what === 'picture' ? SCRIPT_SVG : SCRIPT_PAGE)
      })
})

describe('data stays data', () => {
  test("a composite route's own answer (an object's events) is confined too", async () => {
    const l = await lab()
    const res = await fetch(`${l.base}/api/v1/clusters/mallory/trap/proxy/core/v1/namespaces/demo/configmaps/json/events`, {
      headers: { authorization: `token ${l.mallory.token}` },
    })
    expect(res.status).toBe(200)
    expect(browserHeaders(res)).toEqual({ ...CONFINED, 'content-disposition': null })
  })

  for (const what of ['json', 'text', 'yaml', 'protobuf'])
    test(`${what} through the passthrough and the spec's route → CSP and nosniff (the member's own dropped), shown inline`, async () => {
      const l = await lab()
      for (const path of [`/k8s/api/v1/namespaces/demo/configmaps/${what}`, `/proxy/core/v1/namespaces/demo/configmaps/${what}`]) {
        const res = await fetch(`${l.base}/api/v1/clusters/mallory/trap${path}`, { headers: { authorization: `token ${l.mallory.token}` } })
        expect(res.status).toBe(200)
        expect(browserHeaders(res)).toEqual({ ...CONFINED, 'content-disposition': null })
      }
    })
})
