import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { Messages as RuleMessages } from '../../src/orgs/rules'
import { Messages } from '../../src/orgs/system-admin/service'
import { deadRegistrationFixture } from '../clusters/support'
import { type Credentials, connected, lab, userJwtOf } from '../msgbus/support'
import { makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { applyMigration } from '../support/migrations'
import { closesWithin, connectRefusal, delivers } from '../support/nats'
import { eventually } from '../support/wait'
import { makeOrg } from './support'

// Some scenarios run a real nats-server.
setDefaultTimeout(20000)

const API = '/api/v1'

async function withSystemAdmin(t: TestApp, owner: TestUser, extra: { admins?: TestUser[]; members?: TestUser[] } = {}) {
  const fixture = await makeOrg(t, 'acme', { owner, ...extra })
  const res = await t.as(await t.admin()).send('POST', `${API}/orgs/acme/system-admin`)
  expect(res.status).toBe(201)
  return { ...fixture, bot: (await res.json()) as { id: number; login: string } }
}

describe('POST /api/v1/orgs/{org}/system-admin', () => {
  test('a site admin makes the bot acme-sysadmin → 201; again → 409; an unknown org → 404', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const { bot } = await withSystemAdmin(t, olga)
    expect(bot.login).toBe('acme-sysadmin')
    const admin = await t.admin()
    expect((await t.as(admin).send('POST', `${API}/orgs/acme/system-admin`)).status).toBe(409)
    expect((await t.as(admin).send('POST', `${API}/orgs/nope/system-admin`)).status).toBe(404)
  })

  test('an org owner who is no site admin → 403', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/system-admin`)).status).toBe(403)
  })

  test('the bot cannot sign in with a password', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await withSystemAdmin(t, olga)
    for (const password of ['', PASSWORD]) {
      const res = await t.request('POST', `${API}/user/signin`, { body: { username: 'acme-sysadmin', password } })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
    }
  })

  test('an org created with a fleet-manager endpoint has its system admin at once', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const res = await t
      .as(olga)
      .send('POST', `${API}/orgs`, { username: 'fleet', fleetmgrManagementClusterEndPoint: 'https://mgmt.example' })
    expect(res.status).toBe(201)
    expect((await t.as(olga).get(`${API}/orgs/fleet/tokens/access-tokens/`)).status).toBe(200)
    expect((await t.as(await t.admin()).send('POST', `${API}/orgs/fleet/system-admin`)).status).toBe(409)
  })

  test('deleting the org removes its system admin and its tokens', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await withSystemAdmin(t, olga)
    const created = (await (await t.as(olga).send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { name: 'sync' })).json()) as {
      token: string
    }
    expect((await t.as(olga).delete(`${API}/orgs/acme`)).status).toBeLessThan(300)
    expect((await t.request('GET', `${API}/user`, { token: created.token })).status).toBe(401)
  })
})

describe('the system admin in its org (an owner-level private member, never the last owner)', () => {
  /** Olga's org acme (mia a plain member), its system admin, and a write:organization token of it. */
  async function withActingBot() {
    const t = await makeTestApp()
    const [olga, mia, oscar] = await t.users('olga', 'mia', 'oscar')
    const fixture = await withSystemAdmin(t, olga, { members: [mia] })
    const res = await t
      .as(olga)
      .send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { name: 'automation', scopes: ['write:organization'] })
    const { token } = (await res.json()) as { token: string }
    return { t, olga: olga!, mia: mia!, oscar: oscar!, ...fixture, token }
  }

  test("its token creates a team in its org (what owners may do: 201) and lists the org's members; it may not create an org", async () => {
    const { t, token } = await withActingBot()
    const created = await t.request('POST', `${API}/orgs/acme/teams`, { token, body: { name: 'deployers', permission: 'write' } })
    expect(created.status).toBe(201)
    expect(((await created.json()) as { name: string }).name).toBe('deployers')
    expect((await t.request('POST', `${API}/orgs`, { token, body: { username: 'elsewhere' } })).status).toBe(403)
  })

  test("its token uses its org's cluster as an owner would (200) and no one else's (404)", async () => {
    const { t, olga, oscar, org } = await withActingBot()
    await deadRegistrationFixture(t, org, 'prod')
    await deadRegistrationFixture(t, oscar.user, 'own')
    await deadRegistrationFixture(t, olga.user, 'personal')
    const res = await t.as(olga).send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { name: 'clusters', scopes: ['all'] })
    const { token } = (await res.json()) as { token: string }
    const read = (path: string) => t.request('GET', `${API}/clustersv2/${path}`, { token })
    expect((await read('acme/prod')).status).toBe(200)
    expect((await read('oscar/own')).status).toBe(404)
    expect((await read('olga/personal')).status).toBe(404)
  })

  test('it is a private member: members see it in the member list, marked an org admin; the public members and an outsider do not', async () => {
    const { t, mia, oscar } = await withActingBot()
    const names = async (res: Response) => ((await res.json()) as { login: string }[]).map((u) => u.login)
    const seenByMia = (await (await t.as(mia).get(`${API}/orgs/acme/members`)).json()) as { login: string; orgAdmin: boolean }[]
    expect(seenByMia.find((u) => u.login === 'acme-sysadmin')?.orgAdmin).toBe(true)
    expect(await names(await t.as(mia).get(`${API}/orgs/acme/public_members`))).not.toContain('acme-sysadmin')
    expect(await names(await t.as(oscar).get(`${API}/orgs/acme/members`))).not.toContain('acme-sysadmin')
    expect((await t.as(oscar).get(`${API}/orgs/acme/public_members/acme-sysadmin`)).status).toBe(404)
  })

  test('beside it, the last human owner may neither leave nor be removed (409); with a second owner she may; the bot itself is never taken out of Owners (409)', async () => {
    const { t, olga, token, ownersTeam } = await withActingBot()
    const admin = await t.admin()
    expect((await t.as(admin).delete(`${API}/orgs/acme/members/olga`)).status).toBe(409)
    expect((await t.request('DELETE', `${API}/orgs/acme/members/olga`, { token })).status).toBe(409)
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/members/action/leave`)).status).toBe(409)
    expect((await t.as(olga).delete(`${API}/teams/${ownersTeam.id}/members/olga`)).status).toBe(409)
    for (const path of [`/orgs/acme/members/acme-sysadmin`, `/teams/${ownersTeam.id}/members/acme-sysadmin`]) {
      const res = await t.as(olga).delete(`${API}${path}`)
      expect(res.status).toBe(409)
      expect(((await res.json()) as { message: string }).message).toBe(RuleMessages.systemAdminStays)
    }
    expect((await t.request('POST', `${API}/orgs/acme/members/action/leave`, { token })).status).toBe(409)
    const [omar] = await t.users('omar')
    expect((await t.as(olga).send('PUT', `${API}/teams/${ownersTeam.id}/members/omar`)).status).toBeLessThan(300)
    expect((await t.as(omar!).delete(`${API}/orgs/acme/members/olga`)).status).toBe(204)
  })

  test('the last human owner deletes the org though the system admin is an owner too; the bot may not delete it while she is there', async () => {
    const { t, olga, token } = await withActingBot()
    expect((await t.request('DELETE', `${API}/orgs/acme`, { token })).status).toBe(403)
    expect((await t.as(olga).delete(`${API}/orgs/acme`)).status).toBeLessThan(300)
    expect((await t.request('GET', `${API}/user`, { token })).status).toBe(401)
  })

  test('a system admin made before this version (in no team) → the upgrade makes it an owner: its token creates a team', async () => {
    const { t, bot, token } = await withActingBot()
    // The rows an older version wrote: no team, no membership, allowed to create orgs.
    await t.deps.db.write(async (tx) => {
      await tx.run(sql`DELETE FROM team_users WHERE uid = ${bot.id}`)
      await tx.run(sql`DELETE FROM org_users WHERE uid = ${bot.id}`)
      await tx.run(sql`UPDATE users SET allow_create_organization = 1 WHERE id = ${bot.id}`)
    })
    expect((await t.request('POST', `${API}/orgs/acme/teams`, { token, body: { name: 'before' } })).status).toBe(403)
    await applyMigration(t.deps.db, 'system_admin_in_owners')
    expect((await t.request('POST', `${API}/orgs/acme/teams`, { token, body: { name: 'after' } })).status).toBe(201)
    expect((await t.request('POST', `${API}/orgs`, { token, body: { username: 'elsewhere' } })).status).toBe(403)
    const members = (await (await t.as(await t.admin()).get(`${API}/orgs/acme/public_members`)).json()) as { login: string }[]
    expect(members.map((u) => u.login)).not.toContain('acme-sysadmin')
  })
})

describe('organization access tokens', () => {
  test('an org without a system admin → 400 naming it on every token route', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    for (const [method, path] of [
      ['GET', '/tokens/access-tokens/'],
      ['POST', '/tokens/access-tokens/'],
      ['DELETE', '/tokens/access-tokens/1'],
      ['GET', '/tokens/msgbus-tokens/'],
      ['POST', '/tokens/msgbus-tokens/'],
      ['POST', '/tokens/msgbus-tokens/1/revoke'],
    ] as const) {
      const res = await t
        .as(olga)
        .send(method, `${API}/orgs/acme${path}`, method === 'POST' && path === '/tokens/access-tokens/' ? { name: 'x' } : undefined)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { message: string }).message).toBe(Messages.missing)
    }
  })

  /** Olga's org acme with its system admin, and the token `sync` she created for it. */
  async function withBotToken() {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const { bot } = await withSystemAdmin(t, olga)
    const res = await t.as(olga).send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { name: 'sync', scopes: ['read:user'] })
    const created = (await res.clone().json()) as { id: number; uid: number; token: string; tokenLastEight: string }
    return { t, olga, bot, res, created }
  }

  test("the owner creates a token → 201, not cached, its plaintext shown once, the bot's", async () => {
    const { bot, res, created } = await withBotToken()
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(created.token).toMatch(/^[0-9a-f]{40}$/)
    expect(created.uid).toBe(bot.id)
    expect(created.tokenLastEight).toBe(created.token.slice(-8))
  })

  test('the token acts as the bot', async () => {
    const { t, created } = await withBotToken()
    expect(((await (await t.request('GET', `${API}/user`, { token: created.token })).json()) as { login: string }).login).toBe(
      'acme-sysadmin',
    )
  })

  test('the list shows the used token with the settings fields and token empty', async () => {
    const { t, olga, created } = await withBotToken()
    expect((await t.request('GET', `${API}/user`, { token: created.token })).status).toBe(200)
    // Use is recorded off the request's path: the list is read once it shows.
    const list = await eventually(async () => {
      const rows = (await (await t.as(olga).get(`${API}/orgs/acme/tokens/access-tokens/`)).json()) as Record<string, unknown>[]
      return rows[0]?.hasUsed ? rows : undefined
    })
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({ id: created.id, name: 'sync', token: '', hasUsed: true })
    expect(Object.keys(list[0]!).sort()).toEqual([
      'createdAt',
      'expDate',
      'hasRecentActivity',
      'hasUsed',
      'id',
      'name',
      'token',
      'tokenLastEight',
      'uid',
      'updatedAt',
    ])
  })

  test('delete → 200 and the token stops working; deleting it again → 404', async () => {
    const { t, olga, created } = await withBotToken()
    expect((await t.as(olga).delete(`${API}/orgs/acme/tokens/access-tokens/${created.id}`)).status).toBe(200)
    expect((await t.request('GET', `${API}/user`, { token: created.token })).status).toBe(401)
    expect((await t.as(olga).delete(`${API}/orgs/acme/tokens/access-tokens/${created.id}`)).status).toBe(404)
  })

  test('an org admin may list but not create or delete; a plain member may not list', async () => {
    const t = await makeTestApp()
    const [olga, adam, mia] = await t.users('olga', 'adam', 'mia')
    await withSystemAdmin(t, olga, { admins: [adam], members: [mia] })
    expect((await t.as(adam).get(`${API}/orgs/acme/tokens/access-tokens/`)).status).toBe(200)
    expect((await t.as(adam).send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { name: 'x' })).status).toBe(403)
    expect((await t.as(adam).delete(`${API}/orgs/acme/tokens/access-tokens/1`)).status).toBe(403)
    expect((await t.as(mia).get(`${API}/orgs/acme/tokens/access-tokens/`)).status).toBe(403)
  })

  test('a token may not mint a broader one for the bot; a bad body → 422', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await withSystemAdmin(t, olga)
    const narrow = (await (
      await t.as(olga).send('POST', `${API}/user/settings/tokens/access-tokens/`, { name: 'narrow', scopes: ['write:organization'] })
    ).json()) as { token: string }
    expect(
      (await t.request('POST', `${API}/orgs/acme/tokens/access-tokens/`, { token: narrow.token, body: { name: 'wide', scopes: ['all'] } }))
        .status,
    ).toBe(403)
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/tokens/access-tokens/`, { scopes: 'all' })).status).toBe(422)
  })
})

describe('organization message-bus tokens', () => {
  test('the owner mints org credentials: they round-trip on org.<orgID>.> only and are listed', async () => {
    const { t } = await lab()
    const [olga, bob] = await t.users('olga', 'bob')
    const { org } = await withSystemAdmin(t, olga)
    const res = await t.as(olga).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/`, { clusterID: 'c-1', productName: 'agent' })
    expect(res.status).toBe(200)
    const creds = (await res.json()) as Credentials
    const agent = await connected(creds)
    expect(await delivers(agent, agent, `org.${org.id}.status`)).toBe(true)
    expect(await delivers(agent, agent, `user.${bob.user.id}.x`)).toBe(false)
    const rows = (await (await t.as(olga).get(`${API}/orgs/acme/tokens/msgbus-tokens/`)).json()) as Record<string, unknown>[]
    expect(rows).toEqual([
      expect.objectContaining({
        msgbusPubKey: userJwtOf(creds).sub,
        accountType: 'cluster',
        clusterID: 'c-1',
        productName: 'agent',
        revoked: false,
      }),
    ])
    // Another org's account is another world: bob's personal credentials do not see org traffic.
    const bobConn = await connected((await (await t.as(bob).get(`${API}/user/msgbus/credentials`)).json()) as Credentials)
    expect(await delivers(agent, bobConn, `org.${org.id}.status`)).toBe(false)
  })

  test('revoking an org credential drops the agent within 1 s; an unknown id → 400', async () => {
    const { t, nats } = await lab()
    const [olga] = await t.users('olga')
    await withSystemAdmin(t, olga)
    const creds = (await (await t.as(olga).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/`)).json()) as Credentials
    const kept = (await (await t.as(olga).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/`)).json()) as Credentials
    const agent = await connected(creds)
    const rows = (await (await t.as(olga).get(`${API}/orgs/acme/tokens/msgbus-tokens/`)).json()) as {
      id: number
      msgbusPubKey: string
      accountType: string
    }[]
    const row = rows.find((r) => r.msgbusPubKey === userJwtOf(creds).sub)!
    expect(row.accountType).toBe('org')
    const since = performance.now()
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/${row.id}/revoke`)).status).toBe(200)
    expect(await closesWithin(agent, 1000, since)).toBeLessThan(1000)
    expect(await connectRefusal(nats.url, creds.credentials)).toMatch(/Authorization Violation/)
    expect(await connectRefusal(nats.url, kept.credentials)).toBeUndefined()
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/999999/revoke`)).status).toBe(400)
  })

  test('an org admin may list but not create or revoke', async () => {
    const { t } = await lab()
    const [olga, adam] = await t.users('olga', 'adam')
    await withSystemAdmin(t, olga, { admins: [adam] })
    expect((await t.as(adam).get(`${API}/orgs/acme/tokens/msgbus-tokens/`)).status).toBe(200)
    expect((await t.as(adam).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/`)).status).toBe(403)
    expect((await t.as(adam).send('POST', `${API}/orgs/acme/tokens/msgbus-tokens/1/revoke`)).status).toBe(403)
  })
})
