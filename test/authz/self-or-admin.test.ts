import { describe, expect, test } from 'bun:test'
import { VISIBILITY } from '../../db/schema/codes'
import { Messages, selfOrAdmin, userVisibleTo } from '../../src/authz/authorize'
import { updateUser } from '../../src/identity/store'
import { asBasic, makeTestApp } from '../support/app'
import { permissionOf } from '../support/routes'

/** The `self-or-admin` row of the table: the user named in the path themself, or a site admin. */

describe('the self-or-admin rule', () => {
  const alice = { id: 1, isAdmin: false }
  test.each([
    ['the user themself', true, alice],
    ['another user', false, { id: 2, isAdmin: false }],
    ['a site admin', true, { id: 3, isAdmin: true }],
    ['an anonymous caller', false, undefined],
  ] as const)('%s → %p', (_, allowed, viewer) => {
    expect(selfOrAdmin(viewer, alice)).toBe(allowed)
  })

  test('a private user is visible to themself and site admins only; a limited one to signed-in users', async () => {
    const t = await makeTestApp()
    const [priv, lim, bob] = await t.users('priv', 'lim', 'bob')
    const admin = await t.admin()
    const seen = (who: typeof priv.user, viewer: typeof priv.user | undefined) => userVisibleTo(who, viewer)
    const privRow = { ...priv.user, visibility: VISIBILITY.private }
    const limRow = { ...lim.user, visibility: VISIBILITY.limited }
    expect([seen(privRow, priv.user), seen(privRow, admin.user), seen(privRow, bob.user), seen(privRow, undefined)]).toEqual([
      true,
      true,
      false,
      false,
    ])
    expect([seen(limRow, bob.user), seen(limRow, undefined)]).toEqual([true, false])
  })
})

describe('routes declaring self-or-admin', () => {
  test('the token routes of /users/{username} declare it (with the password credential)', async () => {
    const t = await makeTestApp()
    const routes = t.app.routes.filter((r) => r.path.startsWith('/api/v1/users/:username/tokens'))
    expect(routes.map((r) => `${r.method} ${r.path} ${permissionOf(r)}`).sort()).toEqual([
      'DELETE /api/v1/users/:username/tokens/:token self-or-admin',
      'GET /api/v1/users/:username/tokens self-or-admin',
      'POST /api/v1/users/:username/tokens self-or-admin',
    ])
  })

  test('another user → 403 before the body is looked at (an invalid body is not a 422), nothing created', async () => {
    const t = await makeTestApp()
    await t.users('alice', 'bob')
    const res = await asBasic(t, 'bob', 'POST', '/api/v1/users/alice/tokens', { name: 42 })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.selfOrAdminRequired)
    const list = await asBasic(t, 'alice', 'GET', '/api/v1/users/alice/tokens')
    expect((await list.json()).map((token: { name: string }) => token.name)).toEqual(['test'])
  })

  test('a private user named by someone else → 404 as for no such user; by themself or a site admin → 200', async () => {
    const t = await makeTestApp()
    const [priv] = await t.users('priv', 'bob')
    await t.admin()
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: VISIBILITY.private }))
    const hidden = await asBasic(t, 'bob', 'GET', '/api/v1/users/priv/tokens')
    const unknown = await asBasic(t, 'bob', 'GET', '/api/v1/users/nobody/tokens')
    expect([hidden.status, unknown.status]).toEqual([404, 404])
    expect(await hidden.json()).toEqual(await unknown.json())
    expect((await asBasic(t, 'priv', 'GET', '/api/v1/users/priv/tokens')).status).toBe(200)
    expect((await asBasic(t, 'root', 'GET', '/api/v1/users/priv/tokens')).status).toBe(200)
  })

  test('an organization named as the user → 404 (only individual users have tokens)', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    expect((await asBasic(t, 'alice', 'GET', '/api/v1/users/acme/tokens')).status).toBe(404)
  })
})
