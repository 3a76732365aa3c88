import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Messages } from '../../src/msgbus/service'
import { registrationFixture } from '../clusters/support'
import { delivers, firstServerError } from '../support/nats'
import { type Credentials, connected, lab, tokensOf, userJwtOf } from './support'

// Real nats-server processes and waits on the clock: room for a loaded machine.
setDefaultTimeout(20000)

const connection = {
  server: 'https://127.0.0.1:1',
  caData: '',
  tlsServerName: '',
  insecureSkipTlsVerify: false,
  credential: { token: 'x' },
}

describe('GET /api/v1/user/msgbus/admin_credentials', () => {
  test('a non-admin → 403', async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    expect((await t.as(ann).get('/api/v1/user/msgbus/admin_credentials')).status).toBe(403)
  })

  test("a site admin may subscribe to every user's subjects but not publish on them", async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const admin = await t.admin()
    const res = await t.as(admin).get('/api/v1/user/msgbus/admin_credentials')
    expect(res.status).toBe(200)
    const watcher = await connected((await res.json()) as Credentials)
    const annConn = await connected((await (await t.as(ann).get('/api/v1/user/msgbus/credentials')).json()) as Credentials)
    expect(await delivers(annConn, watcher, `user.${ann.user.id}.news`)).toBe(true)
    expect(await delivers(watcher, annConn, `user.${ann.user.id}.forged`)).toBe(false)
    expect((await tokensOf(t, admin))[0]).toMatchObject({ accountType: 'admin' })
  })
})

describe('GET /api/v1/user/msgbus/user_credentials', () => {
  test('a non-admin → 403; an unknown username → 404', async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const admin = await t.admin()
    expect((await t.as(ann).get('/api/v1/user/msgbus/user_credentials')).status).toBe(403)
    expect((await t.as(admin).get('/api/v1/user/msgbus/user_credentials?username=nobody')).status).toBe(404)
  })

  test('a site admin gets personal credentials of the named user, listed as theirs', async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const admin = await t.admin()
    const res = await t.as(admin).get('/api/v1/user/msgbus/user_credentials?username=ann')
    expect(res.status).toBe(200)
    const creds = (await res.json()) as Credentials
    expect(userJwtOf(creds).nats.sub?.allow).toEqual([`user.${ann.user.id}.>`, `_INBOX_${ann.user.id}.>`])
    const nc = await connected(creds)
    expect(await delivers(nc, nc, `user.${ann.user.id}.x`)).toBe(true)
    expect((await tokensOf(t, ann)).map((r) => r.msgbusPubKey)).toEqual([userJwtOf(creds).sub])
  })
})

describe('GET /api/v1/user/msgbus/cluster-resource-history', () => {
  test('without owner or cluster → 400; a cluster the caller has not → 404', async () => {
    const { t } = await lab()
    const admin = await t.admin()
    for (const query of ['', '?owner=root', '?cluster=c1']) {
      const res = await t.as(admin).get(`/api/v1/user/msgbus/cluster-resource-history${query}`)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { message: string }).message).toBe(Messages.clusterContextMissing)
    }
    expect((await t.as(admin).get('/api/v1/user/msgbus/cluster-resource-history?owner=root&cluster=nope')).status).toBe(404)
  })

  test('the credential may subscribe crh.<clusterUID>.> only, and publish nothing', async () => {
    const { t } = await lab()
    const admin = await t.admin()
    const cluster = await registrationFixture(t, admin.user, 'c1', connection)
    const res = await t.as(admin).get('/api/v1/user/msgbus/cluster-resource-history?owner=root&cluster=c1')
    expect(res.status).toBe(200)
    const creds = (await res.json()) as Credentials
    expect(userJwtOf(creds).nats.sub?.allow).toEqual([`crh.${cluster.uid}.>`])
    const reader = await connected(creds)
    const firstViolation = firstServerError(reader)
    reader.subscribe(`crh.${cluster.uid}.apps.deployments.default.web`)
    reader.subscribe('crh.other-cluster.>')
    await reader.flush()
    // The server answers subscriptions in order: the first violation being the second one's shows the first was allowed.
    expect(await firstViolation).toContain('Permissions Violation for Subscription to "crh.other-cluster.>"')
    expect(await delivers(reader, reader, `crh.${cluster.uid}.apps.deployments.default.web`)).toBe(false)
    expect((await tokensOf(t, admin)).find((r) => r.msgbusPubKey === userJwtOf(creds).sub)).toMatchObject({
      accountType: 'cluster-resource-history',
      clusterID: cluster.uid,
    })
  })
})
