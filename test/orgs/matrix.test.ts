import { describe, expect, test } from 'bun:test'
import { ANONYMOUS_PERMISSIONS } from '../../src/authz/authorize'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { permissionOf } from '../support/routes'
import { makeOrg, type OrgFixture, PNG } from './support'

const API = '/api/v1'
type Caller = 'anonymous' | 'outsider' | 'member' | 'admin' | 'owner' | 'site-admin'
const CALLERS: Caller[] = ['anonymous', 'outsider', 'member', 'admin', 'owner', 'site-admin']

interface World {
  t: TestApp
  acme: OrgFixture
  people: Record<Exclude<Caller, 'anonymous'>, TestUser>
  bob: TestUser
}

/** acme (public): olga owner, ada admin, mia and bob in Members, olga's membership public; carol outsider. */
async function world(): Promise<World> {
  const t = await makeTestApp()
  const [olga, ada, mia, bob, carol] = await t.users('olga', 'ada', 'mia', 'bob', 'carol')
  const acme = await makeOrg(t, 'acme', { owner: olga, admins: [ada], members: [mia, bob], publicMembers: [olga] })
  return { t, acme, bob, people: { outsider: carol, member: mia, admin: ada, owner: olga, 'site-admin': await t.admin() } }
}

const avatarForm = () => {
  const f = new FormData()
  f.set('avatar', new File([PNG], 'a.png', { type: 'image/png' }))
  return f
}

// [method, path (with {team} = Members team id, {bob} = bob's id, {me} = the caller's name), body, statuses by caller]
const MATRIX: [string, string, unknown, Record<Caller, number>][] = [
  ['GET', '/orgs/acme', undefined, { anonymous: 200, outsider: 200, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  ['PATCH', '/orgs/acme', { description: 'x' }, { anonymous: 401, outsider: 403, member: 403, admin: 200, owner: 200, 'site-admin': 200 }],
  // orgLastAdmin: the owner may not delete while the admin ada remains.
  ['DELETE', '/orgs/acme', undefined, { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 403, 'site-admin': 204 }],
  ['GET', '/orgs/acme/user/bob', undefined, { anonymous: 401, outsider: 200, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  ['GET', '/orgs/acme/is-owner', undefined, { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 200, 'site-admin': 403 }],
  ['GET', '/orgs/acme/members', undefined, { anonymous: 200, outsider: 200, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  ['GET', '/orgs/acme/members/bob', undefined, { anonymous: 302, outsider: 302, member: 204, admin: 204, owner: 204, 'site-admin': 204 }],
  [
    'DELETE',
    '/orgs/acme/members/bob',
    undefined,
    { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 204, 'site-admin': 204 },
  ],
  [
    'POST',
    '/orgs/acme/members/action/remove?uid={bob}',
    undefined,
    { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 200, 'site-admin': 200 },
  ],
  [
    'POST',
    '/orgs/acme/members/action/public?uid={bob}',
    undefined,
    { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 200, 'site-admin': 200 },
  ],
  [
    'GET',
    '/orgs/acme/public_members',
    undefined,
    { anonymous: 200, outsider: 200, member: 200, admin: 200, owner: 200, 'site-admin': 200 },
  ],
  [
    'GET',
    '/orgs/acme/public_members/olga',
    undefined,
    { anonymous: 204, outsider: 204, member: 204, admin: 204, owner: 204, 'site-admin': 204 },
  ],
  [
    'PUT',
    '/orgs/acme/public_members/{me}',
    undefined,
    { anonymous: 401, outsider: 403, member: 204, admin: 204, owner: 204, 'site-admin': 204 },
  ],
  [
    'DELETE',
    '/orgs/acme/public_members/{me}',
    undefined,
    { anonymous: 401, outsider: 403, member: 204, admin: 204, owner: 204, 'site-admin': 204 },
  ],
  [
    'PUT',
    '/orgs/acme/public_members/bob',
    undefined,
    { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 403, 'site-admin': 403 },
  ],
  ['GET', '/orgs/acme/avatar/', undefined, { anonymous: 401, outsider: 403, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  ['POST', '/orgs/acme/avatar/', avatarForm, { anonymous: 401, outsider: 403, member: 403, admin: 200, owner: 200, 'site-admin': 200 }],
  [
    'POST',
    '/orgs/acme/avatar/delete',
    undefined,
    { anonymous: 401, outsider: 403, member: 403, admin: 200, owner: 200, 'site-admin': 200 },
  ],
  ['GET', '/orgs/acme/teams', undefined, { anonymous: 401, outsider: 403, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  ['POST', '/orgs/acme/teams', { name: 'new' }, { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 201, 'site-admin': 201 }],
  ['GET', '/teams/{team}', undefined, { anonymous: 401, outsider: 404, member: 200, admin: 403, owner: 200, 'site-admin': 200 }],
  [
    'PATCH',
    '/teams/{team}',
    { description: 'x' },
    { anonymous: 401, outsider: 404, member: 403, admin: 403, owner: 200, 'site-admin': 200 },
  ],
  ['DELETE', '/teams/{team}', undefined, { anonymous: 401, outsider: 404, member: 403, admin: 403, owner: 204, 'site-admin': 204 }],
  ['GET', '/teams/{team}/members', undefined, { anonymous: 401, outsider: 404, member: 200, admin: 403, owner: 200, 'site-admin': 200 }],
  [
    'PUT',
    '/teams/{team}/members/carol',
    undefined,
    { anonymous: 401, outsider: 404, member: 403, admin: 403, owner: 204, 'site-admin': 204 },
  ],
  [
    'DELETE',
    '/teams/{team}/members/bob',
    undefined,
    { anonymous: 401, outsider: 404, member: 403, admin: 403, owner: 204, 'site-admin': 204 },
  ],
  ['GET', '/orgs/acme/roles', undefined, { anonymous: 401, outsider: 403, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  [
    'POST',
    '/orgs/acme/roles',
    { name: 'r', permissions: ['edit:org'] },
    { anonymous: 401, outsider: 403, member: 403, admin: 403, owner: 201, 'site-admin': 201 },
  ],
  ['GET', '/orgs/acme/subscription', undefined, { anonymous: 401, outsider: 403, member: 404, admin: 404, owner: 404, 'site-admin': 404 }],
  ['POST', '/orgs/acme/subscription', undefined, { anonymous: 401, outsider: 403, member: 200, admin: 200, owner: 200, 'site-admin': 200 }],
  [
    'DELETE',
    '/orgs/acme/subscription',
    undefined,
    { anonymous: 401, outsider: 403, member: 200, admin: 200, owner: 200, 'site-admin': 200 },
  ],
]

describe('route × role matrix on a public org', () => {
  for (const [method, template, body, expected] of MATRIX)
    for (const caller of CALLERS)
      test(`${method} ${template} by ${caller} → ${expected[caller]}`, async () => {
        const w = await world()
        const who = caller === 'anonymous' ? undefined : w.people[caller]
        const path =
          API +
          template
            .replace('{team}', String(w.acme.membersTeam!.id))
            .replace('{bob}', String(w.bob.user.id))
            .replace('{me}', who?.name ?? 'carol')
        const payload = typeof body === 'function' ? (body as () => FormData)() : body
        const res = who ? await w.t.as(who).send(method, path, payload) : await w.t.request(method, path, { body: payload })
        expect(res.status).toBe(expected[caller])
      })
})

describe('cross-org isolation', () => {
  test('the owner of org A reaches nothing guarded of org B (public: 403, any team route: 404; what any viewer may read aside) nor of private org C (404; subscription 400 as for no org)', async () => {
    const t = await makeTestApp()
    const [olga, bob] = await t.users('olga', 'bob')
    await makeOrg(t, 'orga', { owner: olga })
    const b = await makeOrg(t, 'orgb', { owner: bob, members: [bob] })
    const c = await makeOrg(t, 'orgc', { owner: bob, members: [bob], visibility: 'private' })
    const orgRoutes = t.app.routes.filter((r) => /:org\b|:teamId\b/.test(r.path) && permissionOf(r) !== undefined)
    expect(orgRoutes.length).toBeGreaterThan(25)
    for (const route of orgRoutes) {
      const permission = permissionOf(route)!
      for (const [name, fixture, hidden] of [
        ['orgb', b, false],
        ['orgc', c, true],
      ] as const) {
        const path = route.path
          .replace(':org', name)
          .replace(':teamId', String(fixture.membersTeam!.id))
          .replace(':username', 'bob')
          .replace(':action', 'leave')
        const res = await t.as(olga).send(route.method, path, route.method === 'GET' ? undefined : {})
        // A hidden org looks like no org (T3); the subscription routes answer 400 for "no org".
        const expected = hidden
          ? permission === 'org-subscriber'
            ? 400
            : 404
          : (ANONYMOUS_PERMISSIONS as readonly string[]).includes(permission) || permission === 'org-viewer'
            ? undefined
            : permission === 'team-member' || route.path.includes(':teamId')
              ? 404
              : 403
        if (expected === undefined) continue
        expect({ route: `${route.method} ${path}`, status: res.status }).toEqual({ route: `${route.method} ${path}`, status: expected })
      }
    }
  })
})
