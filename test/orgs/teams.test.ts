import { describe, expect, test } from 'bun:test'
import { Messages as AuthzMessages } from '../../src/authz/authorize'
import { Messages as ConditionMessages } from '../../src/orgs/rules'
import { Messages as StoreMessages } from '../../src/orgs/store'
import { Messages } from '../../src/orgs/teams/service'
import { makeTestApp } from '../support/app'
import { makeOrg } from './support'

const API = '/api/v1'

describe('GET /user/teams', () => {
  test('alice sees Owners of acme with permission owner and the organization embedded', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).get(`${API}/user/teams`)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-total-count')).toBe('1')
    expect(await res.json()).toMatchObject([
      { name: 'Owners', permission: 'owner', type: 'owners', units: [], role_ids: [], organization: { username: 'acme', name: 'acme' } },
    ])
  })

  test('anonymous → 401', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', `${API}/user/teams`)).status).toBe(401)
  })
})

describe('GET /orgs/{org}/teams', () => {
  test('a member → 200 with organization null, Owners first; an outsider → 403; private org outsider → 404', async () => {
    const t = await makeTestApp()
    const [alice, bob, carol] = await t.users('alice', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: alice, members: [bob], admins: [carol] })
    const [dave] = await t.users('dave')
    const res = await t.as(bob).get(`${API}/orgs/acme/teams`)
    expect(res.status).toBe(200)
    expect((await res.json()).map((team: { name: string; organization: unknown }) => [team.name, team.organization])).toEqual([
      ['Owners', null],
      ['Admins', null],
      ['Members', null],
    ])
    const refused = await t.as(dave).get(`${API}/orgs/acme/teams`)
    expect(refused.status).toBe(403)
    expect((await refused.json()).message).toBe(AuthzMessages.memberRequired)
    await makeOrg(t, 'secret', { owner: alice, visibility: 'private' })
    expect((await t.as(dave).get(`${API}/orgs/secret/teams`)).status).toBe(404)
  })
})

describe('POST /orgs/{org}/teams', () => {
  test('the owner creates devs → 201; the same name again (any case) → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t
      .as(alice)
      .send('POST', `${API}/orgs/acme/teams`, { name: 'devs', description: 'd', permission: 'write', units: ['repo.code'] })
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({
      name: 'devs',
      description: 'd',
      permission: 'write',
      units: ['repo.code'],
      type: 'custom',
      role_ids: [],
      organization: { username: 'acme' },
    })
    const again = await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'DEVS' })
    expect(again.status).toBe(422)
    expect((await again.json()).message).toBe(StoreMessages.teamExists)
  })

  test('permission defaults to read; owner permission or a bad name → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    expect((await (await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'readers' })).json()).permission).toBe('read')
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'x', permission: 'owner' })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'bad name' })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/teams`, {})).status).toBe(422)
  })

  test('role_ids of another org → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    await makeOrg(t, 'other', { owner: alice })
    const role = await (await t.as(alice).send('POST', `${API}/orgs/other/roles`, { name: 'x', permissions: ['edit:org'] })).json()
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'devs', role_ids: [role.id] })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.unknownRole)
  })

  test('an admin or member (no admin:org) → 403', async () => {
    const t = await makeTestApp()
    const [alice, ada, bob] = await t.users('alice', 'ada', 'bob')
    await makeOrg(t, 'acme', { owner: alice, admins: [ada], members: [bob] })
    expect((await t.as(ada).send('POST', `${API}/orgs/acme/teams`, { name: 'devs' })).status).toBe(403)
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/teams`, { name: 'devs' })).status).toBe(403)
  })
})

describe('GET /teams/{id}', () => {
  test('a team member → 200 with organization; an org member outside the team → 403; an outsider → 404; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, bob, mia, carol] = await t.users('alice', 'bob', 'mia', 'carol')
    const { membersTeam, adminsTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob], admins: [mia] })
    const res = await t.as(bob).get(`${API}/teams/${membersTeam!.id}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'Members', permission: 'read', organization: { username: 'acme' } })
    const refused = await t.as(bob).get(`${API}/teams/${adminsTeam!.id}`)
    expect(refused.status).toBe(403)
    expect((await refused.json()).message).toBe(AuthzMessages.teamMemberRequired)
    expect((await t.as(carol).get(`${API}/teams/${membersTeam!.id}`)).status).toBe(404)
    expect((await t.request('GET', `${API}/teams/${membersTeam!.id}`)).status).toBe(401)
  })

  test('the org owner sees any team → 200; an unknown or malformed id → 404', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).get(`${API}/teams/${membersTeam!.id}`)).status).toBe(200)
    expect((await t.as(alice).get(`${API}/teams/99999`)).status).toBe(404)
    expect((await t.as(alice).get(`${API}/teams/abc`)).status).toBe(404)
  })
})

describe('PATCH /teams/{id}', () => {
  test('the owner edits a team → 200 with the changes', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const res = await t
      .as(alice)
      .send('PATCH', `${API}/teams/${membersTeam!.id}`, { name: 'crew', permission: 'admin', description: 'x', units: ['repo.wiki'] })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'crew', permission: 'admin', description: 'x', units: ['repo.wiki'] })
    // bob's team is now an admin team: bob is an org admin and may edit the org.
    expect((await t.as(bob).send('PATCH', `${API}/orgs/acme`, { description: 'bob was here' })).status).toBe(200)
  })

  test('downgrading or renaming Owners → 200 and it stays Owners/owner', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: alice })
    const res = await t
      .as(alice)
      .send('PATCH', `${API}/teams/${ownersTeam.id}`, { name: 'Bosses', permission: 'read', description: 'the owners' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'Owners', permission: 'owner', description: 'the owners' })
  })

  test("renaming onto another team's name → 422; a member → 403", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).send('PATCH', `${API}/teams/${membersTeam!.id}`, { name: 'owners' })).status).toBe(422)
    expect((await t.as(bob).send('PATCH', `${API}/teams/${membersTeam!.id}`, { description: 'x' })).status).toBe(403)
  })
})

describe('DELETE /teams/{id}', () => {
  test('deleting a team → 204; members in no other team leave the org', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).delete(`${API}/teams/${membersTeam!.id}`)).status).toBe(204)
    expect((await t.as(alice).get(`${API}/orgs/acme/members/bob`)).status).toBe(404)
    expect((await t.as(alice).get(`${API}/teams/${membersTeam!.id}`)).status).toBe(404)
  })

  test('the Owners team → 403 and it stays', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).delete(`${API}/teams/${ownersTeam.id}`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.ownersTeamUndeletable)
    expect((await t.as(alice).get(`${API}/teams/${ownersTeam.id}`)).status).toBe(200)
  })
})

describe('team members', () => {
  /** acme (owner alice, bob in its Members team) after alice added carol to that team. */
  async function carolAdded() {
    const t = await makeTestApp()
    const [alice, bob, carol] = await t.users('alice', 'bob', 'carol')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const added = await t.as(alice).send('PUT', `${API}/teams/${membersTeam!.id}/members/carol`)
    return { t, alice: alice!, bob: bob!, carol: carol!, team: membersTeam!, added }
  }

  test('adding carol → 204, and she is an org member, not a public one', async () => {
    const { t, alice, added } = await carolAdded()
    expect(added.status).toBe(204)
    expect((await t.as(alice).get(`${API}/orgs/acme/members/carol`)).status).toBe(204)
    expect((await t.request('GET', `${API}/orgs/acme/public_members/carol`)).status).toBe(404)
  })

  test("the team's member list shows her, with X-Total-Count", async () => {
    const { t, bob, team } = await carolAdded()
    const list = await t.as(bob).get(`${API}/teams/${team.id}/members`)
    expect((await list.json()).map((u: { login: string }) => u.login)).toEqual(['bob', 'carol'])
    expect(list.headers.get('x-total-count')).toBe('2')
  })

  test('removing her from her only team → 204, and she leaves the org', async () => {
    const { t, alice, carol, team } = await carolAdded()
    expect((await t.as(alice).delete(`${API}/teams/${team.id}/members/carol`)).status).toBe(204)
    expect((await t.as(alice).get(`${API}/orgs/acme/members/carol`)).status).toBe(404)
    expect(await (await t.as(carol).get(`${API}/user/orgs`)).json()).toEqual([])
  })

  test('removing the last member of Owners → 409', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).delete(`${API}/teams/${ownersTeam.id}/members/alice`)
    expect(res.status).toBe(409)
    expect((await res.json()).message).toBe(ConditionMessages.lastOwner)
  })

  test('an unknown user → 404; a member adding someone → 403', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob', 'carol')
    const { membersTeam } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).send('PUT', `${API}/teams/${membersTeam!.id}/members/nobody`)).status).toBe(404)
    expect((await t.as(alice).delete(`${API}/teams/${membersTeam!.id}/members/nobody`)).status).toBe(404)
    expect((await t.as(bob).send('PUT', `${API}/teams/${membersTeam!.id}/members/carol`)).status).toBe(403)
  })
})

describe('custom roles', () => {
  test('a team with a custom role holding delete:avatar lets its plain member remove the avatar', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice })
    const created = await t.as(alice).send('POST', `${API}/orgs/acme/roles`, { name: 'avatar-keeper', permissions: ['delete:avatar'] })
    expect(created.status).toBe(201)
    const role = await created.json()
    expect(role).toMatchObject({ name: 'avatar-keeper', permissions: ['delete:avatar'] })
    const team = await (await t.as(alice).send('POST', `${API}/orgs/acme/teams`, { name: 'keepers', role_ids: [role.id] })).json()
    expect(team.role_ids).toEqual([role.id])
    await t.as(alice).send('PUT', `${API}/teams/${team.id}/members/bob`)
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/avatar/delete`)).status).toBe(200)
    // Without the role, a read team grants only view:avatar.
    await t.as(alice).send('PATCH', `${API}/teams/${team.id}`, { role_ids: [] })
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/avatar/delete`)).status).toBe(403)
  })

  test('roles: list → 200 for members; an unknown permission string → 422; a duplicate name → 422; a member creating → 403', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/roles`, { name: 'r', permissions: ['fly:plane'] })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/roles`, { name: 'r', permissions: ['edit:org'] })).status).toBe(201)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/roles`, { name: 'r', permissions: ['edit:org'] })).status).toBe(422)
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/roles`, { name: 's', permissions: ['edit:org'] })).status).toBe(403)
    expect(await (await t.as(bob).get(`${API}/orgs/acme/roles`)).json()).toMatchObject([{ name: 'r', permissions: ['edit:org'] }])
  })
})
