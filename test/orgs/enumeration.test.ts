import { describe, expect, test } from 'bun:test'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { permissionOf } from '../support/routes'

/**
 * T3: to an outsider a private org (and anything inside it) answers exactly like one that does
 * not exist: same status, same body, same headers but the per-request ones.
 */

const API = '/api/v1'
const PER_REQUEST = new Set(['date', 'x-request-id'])

async function snapshot(res: Response) {
  const headers = [...res.headers.entries()].filter(([k]) => !PER_REQUEST.has(k)).sort()
  return { status: res.status, headers, body: await res.text() }
}

async function privateOrg(): Promise<{ t: TestApp; mallory: TestUser; teamId: number }> {
  const t = await makeTestApp()
  const [olga, mallory] = await t.users('olga', 'mallory')
  const { ownersTeam } = await makeOrg(t, 'secret', { owner: olga, visibility: 'private' })
  return { t, mallory, teamId: ownersTeam.id }
}

describe('T3: a private org looks like no org', () => {
  for (const method of ['GET', 'POST', 'DELETE'])
    test(`an outsider ${method}s /orgs/{private}/subscription → the same answer as for a nonexistent org`, async () => {
      const { t, mallory } = await privateOrg()
      const hidden = await snapshot(await t.as(mallory).send(method, `${API}/orgs/secret/subscription`))
      const missing = await snapshot(await t.as(mallory).send(method, `${API}/orgs/nosuchorg/subscription`))
      expect(hidden).toEqual(missing)
      expect(hidden.status).toBe(400)
    })

  for (const [method, suffix] of [
    ['GET', ''],
    ['PATCH', ''],
    ['DELETE', ''],
    ['GET', '/members'],
    ['PUT', '/members/mallory'],
    ['DELETE', '/members/mallory'],
  ] as const)
    test(`an outsider ${method}s /teams/{team of a private org}${suffix} → the same answer as for a nonexistent team`, async () => {
      const { t, mallory, teamId } = await privateOrg()
      const hidden = await snapshot(
        await t.as(mallory).send(method, `${API}/teams/${teamId}${suffix}`, method === 'PATCH' ? {} : undefined),
      )
      const missing = await snapshot(await t.as(mallory).send(method, `${API}/teams/99999${suffix}`, method === 'PATCH' ? {} : undefined))
      expect(hidden).toEqual(missing)
      expect(hidden.status).toBe(404)
    })

  test('anonymous GETs a team of a private org → 401 like any team route', async () => {
    const { t, teamId } = await privateOrg()
    expect((await t.request('GET', `${API}/teams/${teamId}`)).status).toBe(401)
  })
})

describe('T3 sweep: every org route, private org vs no org', () => {
  for (const caller of ['outsider', 'anonymous'] as const)
    test(`an ${caller} on every /orgs/{org} route gets byte-identical answers for a private org and a missing one`, async () => {
      const { t, mallory } = await privateOrg()
      const routes = t.app.routes.filter((r) => r.path.includes(':org') && !r.path.includes(':teamId') && permissionOf(r) !== undefined)
      expect(routes.length).toBeGreaterThan(20)
      for (const route of routes) {
        const path = (name: string) => route.path.replace(':org', name).replace(':username', 'olga').replace(':action', 'leave')
        const send = (name: string) =>
          caller === 'outsider'
            ? t.as(mallory).send(route.method, path(name), route.method === 'GET' ? undefined : {})
            : t.request(route.method, path(name), route.method === 'GET' ? {} : { body: {} })
        const hidden = await snapshot(await send('secret'))
        const missing = await snapshot(await send('nosuchorg'))
        expect({ route: `${route.method} ${route.path}`, ...hidden }).toEqual({ route: `${route.method} ${route.path}`, ...missing })
      }
    })
})
