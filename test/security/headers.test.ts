import { describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { makeTestApp, PASSWORD } from '../support/app'

describe('security headers and file modes', () => {
  test('POST /user/signin sets its cookies with Cache-Control: no-store', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const res = await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie().join()).toContain('platform_session=')
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  test('JSON answers, errors and unknown routes included, carry X-Content-Type-Options: nosniff', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    for (const res of [
      await t.as(alice!).get('/api/v1/user'),
      await t.request('GET', '/api/v1/user'),
      await t.request('GET', '/api/v1/no-such-route'),
      await t.request('GET', '/api/v1/swagger.json'),
    ])
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  test("the database file and its WAL are readable by the service's user only (0600)", async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const db = join(t.config.dataDir, 'platform.db')
    for (const file of [db, `${db}-wal`]) expect(statSync(file).mode & 0o777).toBe(0o600)
  })
})

describe('a wrong credential is 401 everywhere', () => {
  for (const path of ['/api/v1/swagger.json', '/api/v1/swagger', '/api/v1/no-such-route', '/no-such-page'])
    test(`GET ${path} with an invalid token → 401; without a credential → not 401`, async () => {
      const t = await makeTestApp()
      const bad = await t.request('GET', path, { headers: { authorization: 'token 0000000000000000000000000000000000000000' } })
      expect(bad.status).toBe(401)
      expect((await t.request('GET', path)).status).not.toBe(401)
    })
})
