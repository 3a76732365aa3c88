import { describe, expect, test } from 'bun:test'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { makeTestApp } from '../support/app'
import { type BuiltChart, buildChart, serveHelmRepo } from '../support/charts'

/** Helm HTTP repositories: TLS with the source's CA, Basic auth, credentials kept to the repository's host. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const tls = await generateServerTls(['127.0.0.1'])
const chart = buildChart('demo', '0.1.0')
const repo = serveHelmRepo([chart], { tls: { certPem: tls.certPem, keyPem: tls.keyPem } })

async function orderFrom(source: Record<string, unknown>) {
  const t = await makeTestApp(ENV)
  const admin = await t.admin()
  expect((await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'tls', url: repo.url, ...source })).status).toBe(201)
  const [alice] = await t.users('alice')
  return t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', sourceRef: { name: 'tls' } } }] },
  })
}

/** An archive host that records the Authorization header of every request. */
function archiveHost(charts: BuiltChart[]) {
  const seen: (string | null)[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      seen.push(request.headers.get('authorization'))
      const c = charts.find((x) => new URL(request.url).pathname.endsWith(`/${x.name}-${x.version}.tgz`))
      return c ? new Response(c.bytes as BodyInit) : new Response('not found', { status: 404 })
    },
  })
  return { base: `http://localhost:${server.port}/files`, seen, stop: () => server.stop(true) }
}

describe('chart sources over TLS', () => {
  test("a source with the CA that signed the repository's certificate (caData) → the order succeeds", async () => {
    expect(repo.url).toStartWith('https://')
    expect((await orderFrom({ caData: tls.caCertPem })).status).toBe(200)
  })

  test('the same source without caData → 502 naming the registry (the certificate is not trusted)', async () => {
    const res = await orderFrom({})
    expect(res.status).toBe(502)
    expect((await res.json()).message).toStartWith('chart registry "tls"')
  })

  test('insecureSkipTLSVerify → the order succeeds without the CA', async () => {
    expect((await orderFrom({ insecureSkipTLSVerify: true })).status).toBe(200)
  })
})

describe('Basic auth', () => {
  test("a repository behind Basic auth: the source's credentials are sent, the order succeeds; without them → 502", async () => {
    const guarded = serveHelmRepo([chart], { username: 'reader', password: 'basic-secret-1' })
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t
      .as(admin)
      .send('POST', '/api/v1/admin/chart-sources', { name: 'with', url: guarded.url, username: 'reader', password: 'basic-secret-1' })
    await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'without', url: guarded.url })
    const [alice] = await t.users('alice')
    const orderFromSource = (name: string) =>
      t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
        spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', sourceRef: { name } } }] },
      })
    expect((await orderFromSource('with')).status).toBe(200)
    const refused = await orderFromSource('without')
    expect(refused.status).toBe(502)
    expect((await refused.json()).message).toBe(
      `chart registry "without" (${new URL(guarded.url).protocol}//${new URL(guarded.url).host}): answered 401 for the index.yaml`,
    )
  })

  test('an index listing archives on another host: that host gets no credentials (as Helm without pass_credentials)', async () => {
    const files = archiveHost([chart])
    const guarded = serveHelmRepo([chart], { archiveBase: files.base })
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t
      .as(admin)
      .send('POST', '/api/v1/admin/chart-sources', { name: 'split', url: guarded.url, username: 'reader', password: 'basic-secret-2' })
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', sourceRef: { name: 'split' } } }] },
    })
    expect(res.status).toBe(200)
    expect(files.seen).toEqual([null])
    files.stop()
  })
})

describe('archives', () => {
  test('a second order of the same chart version uses the archive kept by digest: no second download', async () => {
    const own = serveHelmRepo([chart])
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'own', url: own.url })
    const [alice] = await t.users('alice')
    const orderIt = () =>
      t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
        spec: {
          packages: [{ chart: { name: 'demo', version: '0.1.0', releaseName: 'demo', namespace: 'default', sourceRef: { name: 'own' } } }],
        },
      })
    expect((await orderIt()).status).toBe(200)
    expect((await orderIt()).status).toBe(200)
    expect(own.requests.filter((r) => r.endsWith('.tgz'))).toEqual(['GET /charts/demo-0.1.0.tgz'])
  })

  test('an archive that does not match the digest its index gives → 502 naming the registry, nothing kept', async () => {
    const lying = serveHelmRepo([chart], { wrongDigests: true })
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'lying', url: lying.url })
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', sourceRef: { name: 'lying' } } }] },
    })
    expect(res.status).toBe(502)
    expect((await res.json()).message).toContain('does not match its digest')
  })
})
