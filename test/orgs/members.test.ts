import { describe, expect, test } from 'bun:test'
import { Messages as AuthzMessages } from '../../src/authz/authorize'
import { Messages } from '../../src/orgs/members/service'
import { Messages as ConditionMessages } from '../../src/orgs/rules'
import { makeTestApp } from '../support/app'
import { makeOrg } from './support'

const API = '/api/v1'
const logins = async (res: Response) => (await res.json()).map((u: { login: string }) => u.login)

describe('GET /orgs/{org}/members', () => {
  test('anonymous and outsiders see public members only; members and site admins see all', async () => {
    const t = await makeTestApp()
    const [alice, bob, carol] = await t.users('alice', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: alice, members: [bob], publicMembers: [alice] })
    expect(await logins(await t.request('GET', `${API}/orgs/acme/members`))).toEqual(['alice'])
    expect(await logins(await t.as(carol).get(`${API}/orgs/acme/members`))).toEqual(['alice'])
    expect(await logins(await t.as(bob).get(`${API}/orgs/acme/members`))).toEqual(['alice', 'bob'])
    expect(await logins(await t.as(await t.admin()).get(`${API}/orgs/acme/members`))).toEqual(['alice', 'bob'])
  })

  test('orgAdmin marks owners and admins; X-Total-Count and Link page the list', async () => {
    const t = await makeTestApp()
    const [alice, ada, bob] = await t.users('alice', 'ada', 'bob')
    await makeOrg(t, 'acme', { owner: alice, admins: [ada], members: [bob] })
    const res = await t.as(bob).get(`${API}/orgs/acme/members?limit=2&page=1`)
    expect(res.headers.get('x-total-count')).toBe('3')
    expect(res.headers.get('link')).toContain('rel="next"')
    expect((await res.json()).map((u: { login: string; orgAdmin: boolean }) => [u.login, u.orgAdmin])).toEqual([
      ['ada', true],
      ['alice', true],
    ])
    expect(await logins(await t.as(bob).get(`${API}/orgs/acme/members?limit=2&page=2`))).toEqual(['bob'])
  })

  test('a private org to anonymous callers → 404', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'secret', { owner: alice, visibility: 'private', publicMembers: [alice] })
    expect((await t.request('GET', `${API}/orgs/secret/members`)).status).toBe(404)
  })
})

describe('GET /orgs/{org}/members/{username}', () => {
  test('a member asks about a member → 204, about a non-member → 404', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).get(`${API}/orgs/acme/members/bob`)).status).toBe(204)
    expect((await t.as(alice).get(`${API}/orgs/acme/members/carol`)).status).toBe(404)
  })

  test('anonymous → 302 to the same-origin public-members check, which answers 404 while bob is private', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const res = await t.request('GET', `${API}/orgs/acme/members/bob`)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/api/v1/orgs/acme/public_members/bob')
    expect((await t.request('GET', res.headers.get('location')!)).status).toBe(404)
  })

  test('an outsider asking about someone else → 302; about themself → 404', async () => {
    const t = await makeTestApp()
    const [alice, carol] = await t.users('alice', 'carol')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await t.as(carol).get(`${API}/orgs/acme/members/alice`)).status).toBe(302)
    expect((await t.as(carol).get(`${API}/orgs/acme/members/carol`)).status).toBe(404)
  })

  test('an unknown user → 404', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await t.as(alice).get(`${API}/orgs/acme/members/nobody`)).status).toBe(404)
  })
})

describe('DELETE /orgs/{org}/members/{username}', () => {
  test('the owner removes bob → 204; bob no longer lists the org; again → 204 (no-op)', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).delete(`${API}/orgs/acme/members/bob`)).status).toBe(204)
    expect(await (await t.as(bob).get(`${API}/user/orgs`)).json()).toEqual([])
    expect(await (await t.as(bob).get(`${API}/user/teams`)).json()).toEqual([])
    expect((await t.as(alice).delete(`${API}/orgs/acme/members/bob`)).status).toBe(204)
  })

  test('a member or an admin (no admin:org) → 403', async () => {
    const t = await makeTestApp()
    const [alice, ada, bob] = await t.users('alice', 'ada', 'bob')
    await makeOrg(t, 'acme', { owner: alice, admins: [ada], members: [bob] })
    expect((await t.as(bob).delete(`${API}/orgs/acme/members/alice`)).status).toBe(403)
    const res = await t.as(ada).delete(`${API}/orgs/acme/members/bob`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.permissionRequired('admin:org'))
  })

  test('the last owner removes herself → 409 with the last-owner message; after a second owner joins → 204', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const res = await t.as(alice).delete(`${API}/orgs/acme/members/alice`)
    expect(res.status).toBe(409)
    expect((await res.json()).message).toBe(ConditionMessages.lastOwner)
    expect((await t.as(alice).send('PUT', `${API}/teams/${ownersTeam.id}/members/bob`)).status).toBe(204)
    expect((await t.as(alice).delete(`${API}/orgs/acme/members/alice`)).status).toBe(204)
  })

  test('an unknown user → 404', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await t.as(alice).delete(`${API}/orgs/acme/members/nobody`)).status).toBe(404)
  })

  test('a site admin cannot be removed from the administrative org (oldest org made by a site admin) → 403', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const [alice] = await t.users('alice')
    const hq = await makeOrg(t, 'hq', { owner: admin, owners: [alice] })
    await makeOrg(t, 'later', { owner: admin, owners: [alice] })
    const res = await t.as(alice).delete(`${API}/orgs/hq/members/root`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.siteAdminInAdminOrg)
    expect((await t.as(alice).get(`${API}/orgs/hq/members/root`)).status).toBe(204)
    expect(hq.org.name).toBe('hq')
    expect((await t.as(alice).delete(`${API}/orgs/later/members/root`)).status).toBe(204)
  })
})

describe('public members', () => {
  test('bob publicizes himself → 204; the check and the list show him; concealing → 404 again', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.request('GET', `${API}/orgs/acme/public_members/bob`)).status).toBe(404)
    expect((await t.as(bob).send('PUT', `${API}/orgs/acme/public_members/bob`)).status).toBe(204)
    expect((await t.request('GET', `${API}/orgs/acme/public_members/bob`)).status).toBe(204)
    expect(await logins(await t.request('GET', `${API}/orgs/acme/public_members`))).toEqual(['bob'])
    expect((await t.as(bob).delete(`${API}/orgs/acme/public_members/bob`)).status).toBe(204)
    expect((await t.request('GET', `${API}/orgs/acme/public_members/bob`)).status).toBe(404)
  })

  test("the owner publicizing or concealing bob → 403 with Gitea's messages", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const put = await t.as(alice).send('PUT', `${API}/orgs/acme/public_members/bob`)
    expect(put.status).toBe(403)
    expect((await put.json()).message).toBe(Messages.cannotPublicize)
    const del = await t.as(alice).delete(`${API}/orgs/acme/public_members/bob`)
    expect((await del.json()).message).toBe(Messages.cannotConceal)
  })

  test('a non-member publicizing themself → 403; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, carol] = await t.users('alice', 'carol')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(carol).send('PUT', `${API}/orgs/acme/public_members/carol`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.memberRequired)
    expect((await t.request('PUT', `${API}/orgs/acme/public_members/carol`)).status).toBe(401)
  })

  test('public_members of an unknown user → 404', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await t.request('GET', `${API}/orgs/acme/public_members/nobody`)).status).toBe(404)
  })
})

describe('POST /orgs/{org}/members/action/{action}', () => {
  test('public / private for oneself → 200 and the flag follows', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/members/action/public?uid=${bob.user.id}`)).status).toBe(200)
    expect((await t.request('GET', `${API}/orgs/acme/public_members/bob`)).status).toBe(204)
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/members/action/private?uid=${bob.user.id}`)).status).toBe(200)
    expect((await t.request('GET', `${API}/orgs/acme/public_members/bob`)).status).toBe(404)
  })

  test("the owner may set another member's visibility; a member may not → 403", async () => {
    const t = await makeTestApp()
    const [alice, bob, mia] = await t.users('alice', 'bob', 'mia')
    await makeOrg(t, 'acme', { owner: alice, members: [bob, mia] })
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/members/action/public?uid=${bob.user.id}`)).status).toBe(200)
    const res = await t.as(mia).send('POST', `${API}/orgs/acme/members/action/private?uid=${bob.user.id}`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.changeOthersVisibility)
  })

  test('remove by the owner → 200; by a member → 403; the last owner → 409', async () => {
    const t = await makeTestApp()
    const [alice, bob, mia] = await t.users('alice', 'bob', 'mia')
    await makeOrg(t, 'acme', { owner: alice, members: [bob, mia] })
    expect((await t.as(mia).send('POST', `${API}/orgs/acme/members/action/remove?uid=${bob.user.id}`)).status).toBe(403)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/members/action/remove?uid=${bob.user.id}`)).status).toBe(200)
    expect((await t.as(alice).get(`${API}/orgs/acme/members/bob`)).status).toBe(404)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/members/action/remove?uid=${alice.user.id}`)).status).toBe(409)
  })

  test('leave: a member leaves (uid ignored) → 200; the last owner → 409', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/members/action/leave?uid=${alice.user.id}`)).status).toBe(200)
    expect(await (await t.as(bob).get(`${API}/user/orgs`)).json()).toEqual([])
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/members/action/leave`)
    expect(res.status).toBe(409)
    expect((await res.json()).message).toBe(ConditionMessages.lastOwner)
  })

  test.each(['', '?uid=', '?uid=abc', '?uid=999999'])('uid %p → 400', async (query) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/members/action/public${query}`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.uidRequired)
  })

  test('an unknown action → 400; a non-member → 403; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, carol] = await t.users('alice', 'carol')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/members/action/promote?uid=${alice.user.id}`)).status).toBe(400)
    expect((await t.as(carol).send('POST', `${API}/orgs/acme/members/action/leave`)).status).toBe(403)
    expect((await t.request('POST', `${API}/orgs/acme/members/action/leave`)).status).toBe(401)
  })
})
