import { describe, expect, test } from 'bun:test'
import { fleetmgrSyncTokens } from '../../db/schema'
import { Messages } from '../../src/orgs/fleetmgr/service'
import { findSystemAdmin } from '../../src/orgs/system-admin/store'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { makeOrg } from './support'

const API = '/api/v1'

interface FleetmgrApiToken {
  userID: number
  orgID: number
  orgName: string
  accessKeyID: string
  secretAccessKey: string
}

async function fleetOrg(t: TestApp, owner: TestUser): Promise<number> {
  const res = await t
    .as(owner)
    .send('POST', `${API}/orgs`, { username: 'fleet', fleetmgrManagementClusterEndPoint: 'https://mgmt.example' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: number }).id
}

/** Olga's fleet-manager org `fleet` after she minted its sync token, and the answers. */
async function fleetWithToken() {
  const t = await makeTestApp()
  const [olga] = await t.users('olga')
  const orgId = await fleetOrg(t, olga)
  const created = await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`, { name: 'sync' })
  const res = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)
  return { t, olga, orgId, created, res }
}

describe('fleet-manager sync token', () => {
  test('none yet → 404', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await fleetOrg(t, olga)
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(404)
  })

  test('the owner mints one → 200 with a message', async () => {
    const { created } = await fleetWithToken()
    expect(created.status).toBe(200)
    expect(await created.json()).toEqual({ message: Messages.created })
  })

  test('GET shows it in full, not cached, for the org with its system admin as user', async () => {
    const { t, orgId, res } = await fleetWithToken()
    expect(res.headers.get('cache-control')).toBe('no-store')
    const token = (await res.json()) as FleetmgrApiToken
    expect(token.accessKeyID).toMatch(/^[A-Z0-9]{20}$/)
    expect(token.secretAccessKey).toMatch(/^[A-Za-z0-9_-]{40}$/)
    expect(token).toMatchObject({ orgID: orgId, orgName: 'fleet' })
    const bot = await findSystemAdmin(t.deps.db.read, orgId)
    expect(token.userID).toBe(bot!.id)
  })

  test('the secret is sealed at rest: no stored row contains it', async () => {
    const { t, res } = await fleetWithToken()
    const token = (await res.json()) as FleetmgrApiToken
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

  test('DELETE by the owner → 200, then GET → 404', async () => {
    const { t, olga } = await fleetWithToken()
    expect((await t.as(olga).delete(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(200)
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(404)
  })

  /** `fleet` with its token, adam in an admin team and mia in a read team. */
  async function fleetWithRoles() {
    const { t, orgId } = await fleetWithToken()
    const [adam, mia] = await t.users('adam', 'mia')
    const { insertTeam, addTeamMember } = await import('../../src/orgs/store')
    await t.deps.db.write(async (tx) => {
      const admins = await insertTeam(tx, { orgId, name: 'Admins', lowerName: 'admins', permission: 'admin' }, [])
      await addTeamMember(tx, admins, adam!.user.id)
      const members = await insertTeam(tx, { orgId, name: 'Members', lowerName: 'members', permission: 'read' }, [])
      await addTeamMember(tx, members, mia!.user.id)
    })
    return { t, adam: adam!, mia: mia! }
  }

  test('an org admin may view it but not mint or delete it → 200, 403, 403', async () => {
    const { t, adam } = await fleetWithRoles()
    expect((await t.as(adam).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(200)
    expect((await t.as(adam).send('POST', `${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
    expect((await t.as(adam).delete(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
  })

  test('a plain member may not view it → 403', async () => {
    const { t, mia } = await fleetWithRoles()
    expect((await t.as(mia).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).status).toBe(403)
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
  /** Olga's org `fleet`, a stranger, and `minted`: olga's POST to the deprecated route. */
  async function fleetViaUserToken() {
    const t = await makeTestApp()
    const [olga, stranger] = await t.users('olga', 'stranger')
    await fleetOrg(t, olga)
    const none = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    const minted = await t.as(olga).send('POST', `${API}/orgs/fleet/fleetmgr/user-token`, { name: 'old' })
    return { t, olga: olga!, stranger: stranger!, none, minted }
  }

  test('GET before any token → 404 with Deprecation', async () => {
    const { none } = await fleetViaUserToken()
    expect(none.status).toBe(404)
    expect(none.headers.get('deprecation')).toBe('true')
  })

  test('POST mints → 200 with Deprecation', async () => {
    const { minted } = await fleetViaUserToken()
    expect(minted.status).toBe(200)
    expect(minted.headers.get('deprecation')).toBe('true')
  })

  test('GET → the sync token, with a Link to its successor resolving to sync-token', async () => {
    const { t, olga } = await fleetViaUserToken()
    const res = await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(res.status).toBe(200)
    expect(res.headers.get('link')).toBe('<sync-token>; rel="successor-version"')
    expect(new URL('sync-token', `http://localhost${API}/orgs/fleet/fleetmgr/user-token`).pathname).toBe(
      `${API}/orgs/fleet/fleetmgr/sync-token`,
    )
    expect(await res.json()).toEqual(await (await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).json())
  })

  test('a refusal → 403 with Deprecation too', async () => {
    const { t, stranger } = await fleetViaUserToken()
    const refused = await t.as(stranger).get(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('deprecation')).toBe('true')
  })

  test('the sync-token route itself carries no Deprecation', async () => {
    const { t, olga } = await fleetViaUserToken()
    expect((await t.as(olga).get(`${API}/orgs/fleet/fleetmgr/sync-token`)).headers.get('deprecation')).toBeNull()
  })

  test('DELETE → 200 with Deprecation', async () => {
    const { t, olga } = await fleetViaUserToken()
    const gone = await t.as(olga).delete(`${API}/orgs/fleet/fleetmgr/user-token`)
    expect(gone.status).toBe(200)
    expect(gone.headers.get('deprecation')).toBe('true')
  })
})
