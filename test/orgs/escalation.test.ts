import { describe, expect, test } from 'bun:test'
import { Messages as GrantMessages } from '../../src/authz/grants'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

/**
 * T32: a caller can grant (or take away) only what they hold themselves. `mia` holds `admin:org`
 * through a custom role, so she manages teams and members, but she is neither an owner nor an admin.
 */

const API = '/api/v1'

interface Setup {
  t: TestApp
  olga: TestUser
  mia: TestUser
  ownersTeamId: number
  managersTeamId: number
}

async function managerSetup(): Promise<Setup> {
  const t = await makeTestApp()
  const [olga, mia] = await t.users('olga', 'mia')
  const { ownersTeam } = await makeOrg(t, 'acme', { owner: olga })
  const role = await (await t.as(olga).send('POST', `${API}/orgs/acme/roles`, { name: 'managers', permissions: ['admin:org'] })).json()
  const team = await (
    await t.as(olga).send('POST', `${API}/orgs/acme/teams`, { name: 'managers', permission: 'read', role_ids: [role.id] })
  ).json()
  expect((await t.as(olga).send('PUT', `${API}/teams/${team.id}/members/mia`)).status).toBe(204)
  return { t, olga, mia, ownersTeamId: ownersTeam.id, managersTeamId: team.id }
}

const isOwner = async (t: TestApp, who: TestUser) => (await t.as(who).get(`${API}/orgs/acme/is-owner`)).status === 200

describe('T32: grants are bounded by what the caller holds', () => {
  test('a custom-role manager adds herself to Owners → 403, and she is no owner', async () => {
    const { t, mia, ownersTeamId } = await managerSetup()
    const res = await t.as(mia).send('PUT', `${API}/teams/${ownersTeamId}/members/mia`)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ message: GrantMessages.grantExceedsCaller })
    expect(await isOwner(t, mia)).toBe(false)
  })

  test('a custom-role manager defines a role with delete:org → 403, no role made', async () => {
    const { t, olga, mia } = await managerSetup()
    const res = await t.as(mia).send('POST', `${API}/orgs/acme/roles`, { name: 'deleters', permissions: ['delete:org'] })
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ message: GrantMessages.grantExceedsCaller })
    expect((await (await t.as(olga).get(`${API}/orgs/acme/roles`)).json()).map((r: { name: string }) => r.name)).toEqual(['managers'])
  })

  test('a custom-role manager puts an owner-made delete:org role on her own team → 403, she still cannot delete the org', async () => {
    const { t, olga, mia, managersTeamId } = await managerSetup()
    const roles = await (await t.as(olga).get(`${API}/orgs/acme/roles`)).json()
    const deleters = await (
      await t.as(olga).send('POST', `${API}/orgs/acme/roles`, { name: 'deleters', permissions: ['delete:org'] })
    ).json()
    const res = await t.as(mia).send('PATCH', `${API}/teams/${managersTeamId}`, { role_ids: [roles[0].id, deleters.id] })
    expect(res.status).toBe(403)
    expect((await t.as(mia).delete(`${API}/orgs/acme`)).status).toBe(403)
  })

  test('a custom-role manager creates an admin team → 403, no team made', async () => {
    const { t, olga, mia } = await managerSetup()
    const res = await t.as(mia).send('POST', `${API}/orgs/acme/teams`, { name: 'admins', permission: 'admin' })
    expect(res.status).toBe(403)
    expect((await (await t.as(olga).get(`${API}/orgs/acme/teams`)).json()).map((x: { name: string }) => x.name)).not.toContain('admins')
  })

  test('a custom-role manager raises her own team to admin → 403, team unchanged', async () => {
    const { t, olga, mia, managersTeamId } = await managerSetup()
    expect((await t.as(mia).send('PATCH', `${API}/teams/${managersTeamId}`, { permission: 'admin' })).status).toBe(403)
    expect(await (await t.as(olga).get(`${API}/teams/${managersTeamId}`)).json()).toMatchObject({ permission: 'read' })
  })

  test('a custom-role manager removes an owner from the org (DELETE member) → 403, the owner stays', async () => {
    const { t, olga, mia } = await managerSetup()
    const [otto] = await t.users('otto')
    expect((await t.as(olga).send('PUT', `${API}/teams/1/members/otto`)).status).toBe(204)
    expect((await t.as(mia).delete(`${API}/orgs/acme/members/olga`)).status).toBe(403)
    expect((await t.as(mia).send('POST', `${API}/orgs/acme/members/action/remove?uid=${olga.user.id}`)).status).toBe(403)
    expect(await isOwner(t, olga)).toBe(true)
    expect(await isOwner(t, otto)).toBe(true)
  })

  test('a custom-role manager takes an owner out of Owners → 403, the owner stays', async () => {
    const { t, olga, mia, ownersTeamId } = await managerSetup()
    await t.users('otto')
    expect((await t.as(olga).send('PUT', `${API}/teams/${ownersTeamId}/members/otto`)).status).toBe(204)
    expect((await t.as(mia).delete(`${API}/teams/${ownersTeamId}/members/olga`)).status).toBe(403)
    expect(await isOwner(t, olga)).toBe(true)
  })

  test('a custom-role manager manages a plain read team → allowed (204)', async () => {
    const { t, olga, mia } = await managerSetup()
    await t.users('rita')
    const team = await (await t.as(mia).send('POST', `${API}/orgs/acme/teams`, { name: 'readers', permission: 'read' })).json()
    expect((await t.as(mia).send('PUT', `${API}/teams/${team.id}/members/rita`)).status).toBe(204)
    expect((await t.as(mia).delete(`${API}/orgs/acme/members/rita`)).status).toBe(204)
    expect((await t.as(olga).get(`${API}/orgs/acme/members/rita`)).status).toBe(404)
  })

  test('an owner still adds someone to Owners and defines any role → 204 / 201', async () => {
    const { t, olga, ownersTeamId } = await managerSetup()
    await t.users('otto')
    expect((await t.as(olga).send('PUT', `${API}/teams/${ownersTeamId}/members/otto`)).status).toBe(204)
    expect(
      (await t.as(olga).send('POST', `${API}/orgs/acme/roles`, { name: 'all', permissions: ['delete:org', 'admin:org'] })).status,
    ).toBe(201)
  })

  test('a site admin outside the org adds someone to Owners → 204', async () => {
    const { t, ownersTeamId } = await managerSetup()
    const root = await t.admin()
    await t.users('otto')
    expect((await t.as(root).send('PUT', `${API}/teams/${ownersTeamId}/members/otto`)).status).toBe(204)
  })
})
