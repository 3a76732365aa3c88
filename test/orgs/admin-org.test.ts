import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/orgs/members/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

/**
 * "Site admins cannot be removed from the administrative org" holds on every route that can take
 * someone out of an org, not only `DELETE /orgs/{org}/members/{username}`.
 */

const API = '/api/v1'

/** Org hq made by alice (not a site admin): not the administrative org; root is on its team `staff`. */
async function ordinaryOrg(): Promise<{ t: TestApp; alice: TestUser; staffTeamId: number }> {
  const t = await makeTestApp()
  await t.admin()
  const [alice] = await t.users('alice')
  await makeOrg(t, 'hq', { owner: alice })
  const staff = await (await t.as(alice).send('POST', `${API}/orgs/hq/teams`, { name: 'staff', permission: 'read' })).json()
  expect((await t.as(alice).send('PUT', `${API}/teams/${staff.id}/members/root`)).status).toBe(204)
  return { t, alice, staffTeamId: staff.id }
}

/** Org hq made by the site admin root (so the administrative org), alice a second owner, an empty team `staff`. */
async function administrativeOrg(): Promise<{ t: TestApp; alice: TestUser; staffTeamId: number }> {
  const t = await makeTestApp()
  const root = await t.admin()
  const [alice] = await t.users('alice')
  await makeOrg(t, 'hq', { owner: root, owners: [alice] })
  const staff = await (await t.as(alice).send('POST', `${API}/orgs/hq/teams`, { name: 'staff', permission: 'read' })).json()
  return { t, alice, staffTeamId: staff.id }
}

const rootIsMember = async (t: TestApp, alice: TestUser) => (await t.as(alice).get(`${API}/orgs/hq/members/root`)).status === 204

describe('the administrative org keeps its site admins', () => {
  test('an owner takes the site admin out of Owners, their only team → 403, still a member', async () => {
    const { t, alice } = await administrativeOrg()
    const res = await t.as(alice).delete(`${API}/teams/1/members/root`)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ message: Messages.siteAdminInAdminOrg })
    expect(await rootIsMember(t, alice)).toBe(true)
  })

  test('an owner deletes the only team of the site admin → 403, still a member', async () => {
    const { t, alice, staffTeamId } = await administrativeOrg()
    const root = await t.admin()
    expect((await t.as(alice).send('PUT', `${API}/teams/${staffTeamId}/members/root`)).status).toBe(204)
    expect((await t.as(root).delete(`${API}/teams/1/members/root`)).status).toBe(204)
    const res = await t.as(alice).delete(`${API}/teams/${staffTeamId}`)
    expect(res.status).toBe(403)
    expect(await rootIsMember(t, alice)).toBe(true)
  })

  test('the site admin leaves one of two teams → 204, still a member', async () => {
    const { t, alice, staffTeamId } = await administrativeOrg()
    expect((await t.as(alice).send('PUT', `${API}/teams/${staffTeamId}/members/root`)).status).toBe(204)
    expect((await t.as(alice).delete(`${API}/teams/${staffTeamId}/members/root`)).status).toBe(204)
    expect(await rootIsMember(t, alice)).toBe(true)
  })

  test('in an org that is not the administrative one, the same team removal → 204', async () => {
    const { t, alice, staffTeamId } = await ordinaryOrg()
    expect((await t.as(alice).delete(`${API}/teams/${staffTeamId}/members/root`)).status).toBe(204)
    expect(await rootIsMember(t, alice)).toBe(false)
  })
})
