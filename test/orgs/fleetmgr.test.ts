import { describe, expect, test } from 'bun:test'
import { fleetmgrSyncTokens } from '../../db/schema'
import { Messages } from '../../src/orgs/fleetmgr/service'
import { findSystemAdmin } from '../../src/orgs/system-admin/store'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { makeOrg } from './support'

const API = '/api/v1'

interface FleetmgrApiToken { userID: number; orgID: number; orgName: string; accessKeyID: string; secretAccessKey: string }

async function fleetOrg(t: TestApp, owner: TestUser): Promise<number> {
  const res = await t.as(owner).send('POST', `${API}/orgs`, { username: 'fleet', fleetmgrManagementClusterEndPoint: 'https://mgmt.example' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: number }).id
}

describe('fleet-manager sync token', () => {
  test('none yet → 404; the owner mints one; GET shows it in full, sealed at rest; the bot is its user', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const orgId = await fleetOrg(t, olga)
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(404)
    const created = await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`, { name: 'sync' })
    expect(created.status).toBe(200)
    expect(await created.json()).toEqual({ message: Messages.created })
    const res = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const token = (await res.json()) as FleetmgrApiToken
    expect(token.accessKeyID).toMatch(/^[A-Z0-9]{20}$/)
    expect(token.secretAccessKey).toMatch(/^[A-Za-z0-9_-]{40}$/)
    expect(token).toMatchObject({ orgID: orgId, orgName: 'fleet' })
    const bot = await findSystemAdmin(t.deps.db.read, orgId)
    expect(token.userID).toBe(bot!.id)
    const stored = await t.deps.db.read.select().from(fleetmgrSyncTokens).all()
    expect(JSON.stringify(stored)).not.toContain(token.secretAccessKey)
  })

  test('a given sha1 is taken as the secret; minting again replaces the token', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await fleetOrg(t, olga)
    await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`, { sha1: 'given-secret' })
    const first = (await (await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).json()) as FleetmgrApiToken
    expect(first.secretAccessKey).toBe('given-secret')
    await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`)
    const second = (await (await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).json()) as FleetmgrApiToken
    expect(second.accessKeyID).not.toBe(first.accessKeyID)
    expect(second.secretAccessKey).not.toBe('given-secret')
  })

  test('an org not of fleet-manager origin → 400', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).send('POST', `${API}/orgs/acme/fleetmgr/sync-token`, {})
    expect(res.status).toBe(400)
    expect(((await res.json()) as { message: string }).message).toBe(Messages.notFleetmgrOrigin)
    expect((await t.as(olga).get(`${API}/orgs/acme/fleetmgr/sync-token`)).status).toBe(404)
  })

  test('DELETE removes it (then 404); an org admin may view but not mint or delete; a member may not view', async () => {
    const t = await makeTestApp()
    const [olga, adam, mia] = await t.users('olga', 'adam', 'mia')
    const orgId = await fleetOrg(t, olga)
    const { insertTeam, addTeamMember } = await import('../../src/orgs/store')
    await t.deps.db.write(async (tx) => {
      const admins = await insertTeam(tx, { orgId, name: 'Admins', lowerName: 'admins', permission: 'admin' }, [])
      await addTeamMember(tx, admins, adam.user.id)
      const members = await insertTeam(tx, { orgId, name: 'Members', lowerName: 'members', permission: 'read' }, [])
      await addTeamMember(tx, members, mia.user.id)
    })
    await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`)
    expect((await t.as(adam).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(200)
    expect((await t.as(adam).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
    expect((await t.as(adam).delete(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
    expect((await t.as(mia).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
    expect((await t.as(olga).delete(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(200)
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(404)
  })

  test('a bad body → 422', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await fleetOrg(t, olga)
    expect((await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`, { sha1: 42 })).status).toBe(422)
    expect((await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`, { sha1: '' })).status).toBe(422)
  })
})

describe('deprecated fleet-manager user-token routes', () => {
  test('they answer as the sync-token routes, with Deprecation and a successor Link, refusals included', async () => {
    const t = await makeTestApp()
    const [olga, stranger] = await t.users('olga', 'stranger')
    await fleetOrg(t, olga)
    const none = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(none.status).toBe(404)
    expect(none.headers.get('deprecation')).toBe('true')
    const minted = await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/user-token`, { name: 'old' })
    expect(minted.status).toBe(200)
    expect(minted.headers.get('deprecation')).toBe('true')
    const res = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(res.status).toBe(200)
    expect(res.headers.get('link')).toBe('<sync-token>; rel="successor-version"')
    expect(new URL('sync-token', `http://localhost${API}/orgs/fleet/fleetmgr/user-token`).pathname).toBe(`${API}/orgs/fleet/fleetmgr/sync-token`)
    expect(await res.json()).toEqual(await (await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).json())
    const refused = await t.as(stranger).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('deprecation')).toBe('true')
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).headers.get('deprecation')).toBeNull()
    const gone = await t.as(olga).delete(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(gone.status).toBe(200)
    expect(gone.headers.get('deprecation')).toBe('true')
  })
})
