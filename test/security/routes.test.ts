import { describe, expect, test } from 'bun:test'
import { mintToken } from '../../src/identity/tokens/service'
import { makeTestApp } from '../support/app'
import { permissionOf } from '../support/routes'

const MINE = /^\/(api\/v1\/user\/settings\/(security|applications\/oauth2)|login\/oauth)\b/

describe('routes of the security area', () => {
  test('every route is in the OpenAPI document with a summary, and declares its permission', async () => {
    const t = await makeTestApp()
    const doc = await (await t.request('GET', '/api/v1/swagger.json')).json()
    const routes = t.app.routes.filter((r) => MINE.test(r.path))
    expect(routes.length).toBeGreaterThan(0)
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}')
      const operation = doc.paths[path]?.[route.method.toLowerCase()]
      expect({ route: `${route.method} ${route.path}`, summary: typeof operation?.summary }).toEqual({
        route: `${route.method} ${route.path}`,
        summary: 'string',
      })
      expect(permissionOf(route)).toBeDefined()
    }
  })

  test('every settings route refuses a token without a user scope → 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, {
      name: 'org only',
      scopes: ['read:organization', 'write:organization'],
    })
    const settings = t.app.routes.filter((r) => r.path.startsWith('/api/v1/user/settings/') && MINE.test(r.path))
    for (const route of settings) {
      const res = await t.request(route.method, route.path.replace(/:(\w+)/g, '1'), {
        token: plaintext,
        body: route.method === 'GET' ? undefined : {},
      })
      expect({ route: `${route.method} ${route.path}`, status: res.status }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
      })
    }
  })

  test('a read:user token may read settings but not change them → GET 200, POST 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'ro', scopes: ['read:user'] })
    expect((await t.request('GET', '/api/v1/user/settings/security/', { token: plaintext })).status).toBe(200)
    expect((await t.request('POST', '/api/v1/user/settings/security/twofa/disable', { token: plaintext })).status).toBe(403)
  })
})
