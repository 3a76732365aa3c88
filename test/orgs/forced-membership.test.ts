import { describe, expect, test } from 'bun:test'
import { updateUser } from '../../src/identity/store'
import { makeTestApp } from '../support/app'
import { makeOrg } from './support'

describe('forced membership', () => {
  test('anyone making an org cannot pull a private user into its Owners team: 404 as for no such user, nothing changes', async () => {
    const t = await makeTestApp()
    const [eve, vic] = await t.users('eve', 'vic')
    await t.deps.db.write((tx) => updateUser(tx, vic!.user.id, { visibility: 2 }))
    const { ownersTeam } = await makeOrg(t, 'trap', { owner: eve! })
    const forced = await t.as(eve!).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/vic`)
    const unknown = await t.as(eve!).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/nobody-at-all`)
    expect(forced.status).toBe(404)
    expect(await forced.text()).toBe(await unknown.text())
    const members = (await (await t.as(eve!).get('/api/v1/orgs/trap/members')).json()) as { login: string }[]
    expect(members.map((m) => m.login)).toEqual(['eve'])
    expect(await (await t.as(vic!).get('/api/v1/user/orgs')).json()).toEqual([])
  }, 30_000)

  test('a public or limited user, and a private one by a site admin, can be added', async () => {
    const t = await makeTestApp()
    const [olga, , vic] = await t.users('olga', 'pat', 'vic')
    await t.deps.db.write((tx) => updateUser(tx, vic!.user.id, { visibility: 2 }))
    const { ownersTeam } = await makeOrg(t, 'acme', { owner: olga! })
    expect((await t.as(olga!).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/pat`)).status).toBe(204)
    expect((await t.as(await t.admin()).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/vic`)).status).toBe(204)
    // Once a member, the private user is no stranger to the org: removal works.
    expect((await t.as(olga!).send('DELETE', `/api/v1/teams/${ownersTeam.id}/members/vic`)).status).toBe(204)
  })
})
