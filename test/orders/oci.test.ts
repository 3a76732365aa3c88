import { afterAll, describe, expect, test } from 'bun:test'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { buildChart, serveOciRegistry } from '../support/charts'

/** Orders of charts in a loopback OCI registry: tag lookup, tag lists, the Bearer token flow. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const charts = [buildChart('web', '1.2.0'), buildChart('web', '1.2.5'), buildChart('web', '1.3.0'), buildChart('web', '2.0.0-beta.1')]
const open = serveOciRegistry(charts)
const guarded = serveOciRegistry(charts, { username: 'puller', password: 's3cret-registry-pass' })

// A token service on another loopback host than the registries (127.0.0.2): it records the Authorization
// header of every request and hands out the registry's token to anonymous requests unless told not to.
const realm = { authorizations: [] as string[], anonymousAllowed: true }
const realmServer = Bun.serve({
  hostname: '127.0.0.2',
  port: 0,
  fetch(request) {
    const authorization = request.headers.get('authorization') ?? ''
    realm.authorizations.push(authorization)
    if (authorization === '' && !realm.anonymousAllowed) return new Response('{"errors":[{"code":"UNAUTHORIZED"}]}', { status: 401 })
    return Response.json({ token: elsewhere.token, expires_in: 300 })
  },
})
afterAll(() => realmServer.stop(true))
const elsewhere = serveOciRegistry(charts, {
  username: 'bot',
  password: 'realm-elsewhere-pass',
  realm: `http://127.0.0.2:${realmServer.port}/token`,
})

async function setup(source: Record<string, unknown>): Promise<{ t: TestApp; alice: TestUser }> {
  const t = await makeTestApp(ENV)
  const admin = await t.admin()
  const res = await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'oci', ...source })
  expect(res.status).toBe(201)
  const [alice] = await t.users('alice')
  return { t, alice: alice! }
}

const orderOf = (t: TestApp, who: TestUser, chart: Record<string, unknown>) =>
  t.as(who).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name: 'web', releaseName: 'web', namespace: 'default', sourceRef: { name: 'oci' }, ...chart } }] },
  })

const headerOf = async (t: TestApp, who: TestUser, uid: string) =>
  (await (await t.as(who).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)).text()).split('\n')[1]

describe('OCI registry', () => {
  test("a user orders an exact version → the registry is asked for that tag's manifest and the layer by digest, and it renders", async () => {
    const { t, alice } = await setup({ url: open.url })
    const before = open.requests.length
    const res = await orderOf(t, alice, { version: '1.2.5' })
    expect(res.status).toBe(200)
    const seen = open.requests.slice(before)
    expect(seen[0]).toBe('GET /v2/charts/web/manifests/1.2.5')
    expect(seen[1]).toMatch(/^GET \/v2\/charts\/web\/blobs\/sha256:[0-9a-f]{64}$/)
    const uid = (await res.json()).metadata.uid
    expect(await headerOf(t, alice, uid)).toBe('# Source: oci - web@1.2.5')
  })

  test('a user orders without a version, and with ~1.2 → the tag list is read; latest stable 1.3.0 and 1.2.5 are picked', async () => {
    const { t, alice } = await setup({ url: open.url })
    const latest = (await (await orderOf(t, alice, {})).json()).metadata.uid
    const ranged = (await (await orderOf(t, alice, { version: '~1.2' })).json()).metadata.uid
    expect(await headerOf(t, alice, latest)).toBe('# Source: oci - web@1.3.0')
    expect(await headerOf(t, alice, ranged)).toBe('# Source: oci - web@1.2.5')
    expect(open.requests).toContain('GET /v2/charts/web/tags/list')
  })

  test('a user orders a version the registry does not have, or a chart it does not have → 422', async () => {
    const { t, alice } = await setup({ url: open.url })
    expect((await orderOf(t, alice, { version: '9.9.9' })).status).toBe(422)
    expect((await orderOf(t, alice, { name: 'nothing' })).status).toBe(422)
  })

  test("a registry that wants a token: the source's credentials fetch a Bearer token from the realm; the order renders", async () => {
    const { t, alice } = await setup({ url: guarded.url, username: 'puller', password: 's3cret-registry-pass' })
    const res = await orderOf(t, alice, { version: '~1.2' })
    expect(res.status).toBe(200)
    expect(guarded.requests).toContain('GET /token')
    expect(await headerOf(t, alice, (await res.json()).metadata.uid)).toBe('# Source: oci - web@1.2.5')
  })

  test("a registry token is reused until it expires by the app's clock (expires_in 300 s), then fetched again", async () => {
    const { t, alice } = await setup({ url: guarded.url, username: 'puller', password: 's3cret-registry-pass' })
    const tokens = () => guarded.requests.filter((r) => r === 'GET /token').length
    const before = tokens()
    expect((await orderOf(t, alice, { version: '1.2.0' })).status).toBe(200)
    expect((await orderOf(t, alice, { version: '1.2.5' })).status).toBe(200)
    expect(tokens() - before).toBe(1)
    t.clock.advance(300_000)
    expect((await orderOf(t, alice, { version: '1.3.0' })).status).toBe(200)
    expect(tokens() - before).toBe(2)
  })

  test("a registry refusing the source's credentials → 502 naming the registry, never the password", async () => {
    const { t, alice } = await setup({ url: guarded.url, username: 'puller', password: 'wrong-password-xyz' })
    const res = await orderOf(t, alice, { version: '1.2.0' })
    expect(res.status).toBe(502)
    const text = await res.text()
    expect(text).toContain('chart registry \\"oci\\"')
    expect(text).not.toContain('wrong-password-xyz')
    expect(t.logs.join('\n')).not.toContain('wrong-password-xyz')
  })

  test("a registry naming a token realm on another host (127.0.0.2) → the realm is asked anonymously, never sent the source's credentials; the order renders", async () => {
    const { t, alice } = await setup({ url: elsewhere.url, username: 'bot', password: 'realm-elsewhere-pass' })
    realm.anonymousAllowed = true
    const before = realm.authorizations.length
    const res = await orderOf(t, alice, { version: '1.2.0' })
    expect(res.status).toBe(200)
    const seen = realm.authorizations.slice(before)
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((authorization) => authorization === '')).toBe(true)
  })

  test("a registry naming a token realm on another host that refuses anonymous requests → 502 saying the credentials go only to the registry's host; the realm never saw them", async () => {
    const { t, alice } = await setup({ url: elsewhere.url, username: 'bot', password: 'realm-elsewhere-pass' })
    realm.anonymousAllowed = false
    const before = realm.authorizations.length
    const res = await orderOf(t, alice, { version: '1.2.5' })
    realm.anonymousAllowed = true
    expect(res.status).toBe(502)
    const { message } = await res.json()
    expect(message).toContain(
      `the source's credentials go only to the registry's own host, and its token service is on 127.0.0.2:${realmServer.port}`,
    )
    expect(message).not.toContain('realm-elsewhere-pass')
    expect(realm.authorizations.slice(before)).toEqual([''])
  })

  test('a user orders by an oci:// chart reference without a source → 200', async () => {
    const t = await makeTestApp(ENV)
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: { items: [{ chart: { name: 'web', version: '1.3.0', releaseName: 'web', namespace: 'default', url: `${open.url}/web` } }] },
    })
    expect(res.status).toBe(200)
    expect(await headerOf(t, alice!, (await res.json()).metadata.uid)).toBe(`# Source: ${open.url}/web - web@1.3.0`)
  })
})
