import { describe, expect, test } from 'bun:test'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/** T15: server-owned fields sent in org and team bodies are ignored. */

const API = '/api/v1'
const HOSTILE = {
  id: 1,
  type: 0,
  is_admin: true,
  orgId: 1,
  org_id: 1,
  lowerName: 'root',
  avatar: '../../etc/passwd',
  createdBy: 1,
  origin: 'marketplace',
}

describe('T15: mass assignment on orgs and teams', () => {
  test('alice creates an org with server-owned fields → 201, none of them taken', async () => {
    const t = await makeTestApp()
    const root = await t.admin()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', `${API}/orgs`, { username: 'acme', ...HOSTILE })
    expect(res.status).toBe(201)
    const org = await res.json()
    expect(org.id).not.toBe(1)
    expect(org.avatar_url).toEndWith('/avatars/acme')
    expect((await t.as(root).get(`${API}/user`)).status).toBe(200)
    expect(
      (
        await t
          .as(alice)
          .get(`${API}/user`)
          .then((r) => r.json())
      ).is_admin,
    ).toBe(false)
    expect((await t.as(alice).get(`${API}/orgs/acme`)).status).toBe(200)
  })

  test('an owner edits with username, id and type → 200, the org keeps its name and id and stays an org', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const { org } = await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).send('PATCH', `${API}/orgs/acme`, { username: 'renamed', name: 'renamed', ...HOSTILE, description: 'd' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id: org.id, username: 'acme', description: 'd' })
    expect((await t.as(olga).get(`${API}/orgs/renamed`)).status).toBe(404)
  })

  test('an owner creates a team with id, orgId and type owners → 201 custom team of this org', async () => {
    const t = await makeTestApp()
    const [olga, bob] = await t.users('olga', 'bob')
    await makeOrg(t, 'other', { owner: bob })
    await makeOrg(t, 'acme', { owner: olga })
    const res = await t
      .as(olga)
      .send('POST', `${API}/orgs/acme/teams`, { name: 'devs', ...HOSTILE, type: 'owners', organization: { username: 'other' } })
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({ name: 'devs', type: 'custom', permission: 'read', organization: { username: 'acme' } })
  })

  test('an owner asks for permission owner on a new or edited team → 422', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/teams`, { name: 'devs', permission: 'owner' })).status).toBe(422)
    const team = await (await t.as(olga).send('POST', `${API}/orgs/acme/teams`, { name: 'devs' })).json()
    expect((await t.as(olga).send('PATCH', `${API}/teams/${team.id}`, { permission: 'owner' })).status).toBe(422)
  })
})
