import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/orgs/teams/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/** Junk identifiers: names of orgs where users are expected, odd ids. Never a 500, never a change. */

const API = '/api/v1'

describe('team membership takes individual users only', () => {
  test('an owner adds an organization to a team → 404 as for an unknown user; it does not become a member', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: olga })
    await makeOrg(t, 'other', { owner: olga })
    const res = await t.as(olga).send('PUT', `${API}/teams/${ownersTeam.id}/members/other`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ message: Messages.userNotFound })
    expect((await t.as(olga).get(`${API}/orgs/acme/members/other`)).status).toBe(404)
    const members = await (await t.as(olga).get(`${API}/orgs/acme/members`)).json()
    expect(members.map((m: { login: string }) => m.login)).toEqual(['olga'])
  })

  for (const id of ['1e3', '-1', '0', '99999999999999999999', '9007199254740993', '0x1', 'abc'])
    test(`an owner asks for team id ${id} → 404`, async () => {
      const t = await makeTestApp()
      const [olga] = await t.users('olga')
      await makeOrg(t, 'acme', { owner: olga })
      expect((await t.as(olga).get(`${API}/teams/${id}`)).status).toBe(404)
      expect((await t.as(olga).send('PUT', `${API}/teams/${id}/members/olga`)).status).toBe(404)
    })
})
