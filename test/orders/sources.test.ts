import { describe, expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'
import { buildChart, serveOciRegistry } from '../support/charts'

/** Chart sources (docs/decisions.md §4a): site admins only, passwords never answered, private addresses only when allowed. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const PASSWORD = 'very-secret-registry-token'

describe('/api/v1/admin/chart-sources', () => {
  test('a site admin adds, reads, replaces and deletes a source; the password is answered as "" everywhere and never logged', async () => {
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    const created = await t.as(admin).send('POST', '/api/v1/admin/chart-sources', {
      name: 'corp',
      url: 'oci://127.0.0.1:5000/charts',
      username: 'bot',
      password: PASSWORD,
    })
    expect(created.status).toBe(201)
    expect(await created.json()).toEqual({
      name: 'corp',
      url: 'oci://127.0.0.1:5000/charts',
      username: 'bot',
      password: '',
      caData: '',
      insecureSkipTLSVerify: false,
    })
    const list = await (await t.as(admin).get('/api/v1/admin/chart-sources')).text()
    const one = await (await t.as(admin).get('/api/v1/admin/chart-sources/corp')).text()
    const replaced = await t
      .as(admin)
      .send('PUT', '/api/v1/admin/chart-sources/corp', { url: 'https://127.0.0.1:8443/charts', username: 'bot2' })
    expect(replaced.status).toBe(200)
    expect((await replaced.json()).url).toBe('https://127.0.0.1:8443/charts')
    for (const text of [list, one, t.logs.join('\n')]) expect(text).not.toContain(PASSWORD)
    expect((await t.as(admin).delete('/api/v1/admin/chart-sources/corp')).status).toBe(204)
    expect((await t.as(admin).get('/api/v1/admin/chart-sources/corp')).status).toBe(404)
  })

  test('a replaced source without a password keeps the stored one (the registry still accepts it)', async () => {
    const registry = serveOciRegistry([buildChart('web', '1.0.0')], { username: 'bot', password: PASSWORD })
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t
      .as(admin)
      .send('POST', '/api/v1/admin/chart-sources', { name: 'corp', url: 'oci://127.0.0.1:1/x', username: 'bot', password: PASSWORD })
    await t.as(admin).send('PUT', '/api/v1/admin/chart-sources/corp', { url: registry.url, username: 'bot' })
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: {
        packages: [{ chart: { name: 'web', version: '1.0.0', releaseName: 'web', namespace: 'default', sourceRef: { name: 'corp' } } }],
      },
    })
    expect(res.status).toBe(200)
  })

  test('a plain user lists or adds sources → 403', async () => {
    const t = await makeTestApp(ENV)
    const [alice] = await t.users('alice')
    expect((await t.as(alice!).get('/api/v1/admin/chart-sources')).status).toBe(403)
    expect((await t.as(alice!).send('POST', '/api/v1/admin/chart-sources', { name: 'x', url: 'https://charts.example.com' })).status).toBe(
      403,
    )
  })

  test('a loopback source without PLATFORM_ALLOW_PRIVATE_REGISTRIES → 422 naming that setting', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    for (const url of ['http://127.0.0.1:8080/charts', 'oci://10.1.2.3/charts', 'https://[::1]/charts']) {
      const res = await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'lan', url })
      expect(res.status).toBe(422)
      expect((await res.json()).message).toContain('PLATFORM_ALLOW_PRIVATE_REGISTRIES=true')
    }
  })

  test('a source URL carrying credentials, a bad name, a duplicate name → 422, 422, 409', async () => {
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    expect((await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'a', url: 'https://u:p@127.0.0.1/charts' })).status).toBe(
      422,
    )
    expect(
      (await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'Bad Name', url: 'https://127.0.0.1/charts' })).status,
    ).toBe(422)
    expect((await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'a', url: 'https://127.0.0.1/charts' })).status).toBe(201)
    expect((await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'a', url: 'https://127.0.0.1/other' })).status).toBe(409)
  })

  test('PUT with another name in the body → 422; PUT of an unknown source → 404', async () => {
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'a', url: 'https://127.0.0.1/charts' })
    expect((await t.as(admin).send('PUT', '/api/v1/admin/chart-sources/a', { name: 'b', url: 'https://127.0.0.1/charts' })).status).toBe(
      422,
    )
    expect((await t.as(admin).send('PUT', '/api/v1/admin/chart-sources/zz', { url: 'https://127.0.0.1/charts' })).status).toBe(404)
  })

  test('PLATFORM_CHART_SOURCES seeds sources at start, password sealed and answered as ""', async () => {
    const t = await makeTestApp({
      ...ENV,
      PLATFORM_CHART_SOURCES: JSON.stringify([
        { name: 'seeded', url: 'https://charts.example.com/stable', username: 'u', password: PASSWORD },
      ]),
    })
    const admin = await t.admin()
    const res = await t.as(admin).get('/api/v1/admin/chart-sources/seeded')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'seeded', url: 'https://charts.example.com/stable', username: 'u', password: '' })
  })
})
