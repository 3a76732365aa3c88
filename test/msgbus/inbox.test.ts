import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { NatsConnection } from '@nats-io/transport-node'
import { closeDeps, createApp, openDeps } from '../../src/app'
import { memoryLogger } from '../../src/logger'
import { accountKeys, USERS_ACCOUNT } from '../../src/msgbus/accounts'
import { closeMsgbus, systemLink } from '../../src/msgbus/bus'
import { credsFile, newKeyPair, userJwt } from '../../src/msgbus/claims'
import { personalInboxPrefix } from '../../src/msgbus/service'
import { insertMsgbusAccount, listMsgbusAccountsOf } from '../../src/msgbus/store'
import { type TestApp, type TestUser, testRequest } from '../support/app'
import { applyMigration } from '../support/migrations'
import { closesWithin, connectRefusal, delivers } from '../support/nats'
import { type Credentials, connected, credentialsOf, lab, userJwtOf } from './support'

// Real nats-server processes: room for a loaded machine.
setDefaultTimeout(20000)

/** One app and nats-server for the file's scenarios (each with users of its own). */
const bus = await lab()

/** Every error the server reports to `nc` from now on. */
function serverErrors(nc: NatsConnection): string[] {
  const seen: string[] = []
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') seen.push(String(s.error.message))
  })()
  return seen
}

/** `who`'s personal connection, replies addressed to their own inbox prefix as their credentials require. */
async function personal(who: TestUser): Promise<NatsConnection> {
  return connected(await credentialsOf(bus.t, who), { inboxPrefix: personalInboxPrefix(who.user.id) })
}

/** A responder on `who`'s subject `user.<uid>.echo` answering each request with its payload. */
async function echo(who: TestUser): Promise<string> {
  const subject = `user.${who.user.id}.echo`
  const responder = await personal(who)
  responder.subscribe(subject, {
    callback: (error, m) => {
      if (!error) m.respond(m.data)
    },
  })
  await responder.flush()
  return subject
}

describe('reply inboxes of personal credentials', () => {
  test('the credentials may subscribe their own _INBOX_<uid>.> only and answer through response permissions', async () => {
    const [ann] = await bus.t.users('ann')
    const claims = userJwtOf(await credentialsOf(bus.t, ann!))
    const uid = ann!.user.id
    expect(claims.nats.sub?.allow).toEqual([`user.${uid}.>`, `_INBOX_${uid}.>`])
    expect(claims.nats.pub?.allow).toEqual([`user.${uid}.>`])
    expect(claims.nats.resp).toEqual({ max: 1, ttl: 60_000_000_000 })
  })

  test('a request with inboxPrefix _INBOX_<uid> gets its answer from a responder of the same user', async () => {
    const [bob] = await bus.t.users('bob')
    const subject = await echo(bob!)
    const requester = await personal(bob!)
    expect((await requester.request(subject, 'ping', { timeout: 5000 })).string()).toBe('ping')
  })

  test("ann subscribing the shared _INBOX.> or bob's _INBOX_<bob>.> → Permissions Violation; she overhears none of bob's replies", async () => {
    const [ann, bob] = await bus.t.users('ann2', 'bob2')
    const annConn = await personal(ann!)
    const refusals = serverErrors(annConn)
    const overheard: string[] = []
    for (const subject of ['_INBOX.>', `_INBOX_${bob!.user.id}.>`])
      annConn.subscribe(subject, {
        callback: (error, m) => {
          if (!error) overheard.push(m.subject)
        },
      })
    await annConn.flush()
    const subject = await echo(bob!)
    const requester = await personal(bob!)
    expect((await requester.request(subject, 'secret', { timeout: 5000 })).string()).toBe('secret')
    await annConn.flush()
    expect(overheard).toEqual([])
    expect(refusals.filter((m) => /Permissions Violation for Subscription to "_INBOX/.test(m))).toHaveLength(2)
  })

  test("ann publishing into bob's inbox (his prefix or the shared one) → Permissions Violation; bob receives nothing", async () => {
    const [ann, bob] = await bus.t.users('ann3', 'bob3')
    const annConn = await personal(ann!)
    const bobConn = await personal(bob!)
    const refusals = serverErrors(annConn)
    expect(await delivers(annConn, bobConn, `${personalInboxPrefix(bob!.user.id)}.forged`)).toBe(false)
    // A client that kept the default prefix: nobody else may write there either.
    const bobDefault = await connected(await credentialsOf(bus.t, bob!))
    expect(await delivers(annConn, bobDefault, '_INBOX.forged')).toBe(false)
    expect(refusals.filter((m) => /Permissions Violation for Publish to "_INBOX/.test(m))).toHaveLength(2)
    expect(annConn.isClosed()).toBe(false)
  })
})

describe('credentials issued with the shared _INBOX.> before the upgrade', () => {
  /** Personal credentials as the previous version signed them: the shared inbox in both directions. */
  async function legacyCredentials(t: TestApp, who: TestUser): Promise<Credentials> {
    const keys = await accountKeys(t.deps, USERS_ACCOUNT)
    const user = newKeyPair('user')
    const issuedAt = t.clock.seconds()
    const both = [`user.${who.user.id}.>`, '_INBOX.>']
    const jwt = await userJwt(user, keys.signer, {
      name: `${who.name}-user`,
      accountPublicKey: keys.publicKey,
      permissions: { pub: { allow: both }, sub: { allow: both } },
      expiresAt: issuedAt + 24 * 3600,
    })
    await t.deps.db.write((tx) =>
      insertMsgbusAccount(tx, {
        uid: who.user.id,
        accountType: 'user',
        msgbusPubKey: user.getPublicKey(),
        account: USERS_ACCOUNT,
        issuedAt,
        expiresAt: issuedAt + 24 * 3600,
      }),
    )
    return { msgbusEndpoints: [t.config.msgbusUrls[0]!], credentials: Buffer.from(credsFile(jwt, user)).toString('base64') }
  }

  test('the upgrade revokes them: their live connection drops at the next start, they are refused after; new ones connect', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const watcher = (await (await t.as(await t.admin()).get('/api/v1/user/msgbus/admin_credentials')).json()) as Credentials
    const legacy = await legacyCredentials(t, ann!)
    const live = await connected(legacy)
    await closeMsgbus(t.deps)
    await applyMigration(t.deps.db, 'retire_shared_inbox_credentials')
    // The next start of the platform pushes the accounts as the database now has them.
    const restarted = await openDeps(t.config, memoryLogger(), t.clock)
    try {
      await systemLink(restarted)
      expect(await closesWithin(live, 5000)).toBeDefined()
      expect(await connectRefusal(nats.url, legacy.credentials)).toMatch(/Authorization Violation/)
      const rows = await listMsgbusAccountsOf(restarted.db.read, ann!.user.id)
      expect(rows.map((r) => r.revokedAt !== null)).toEqual([true])
      // Only personal credentials are retired: a site admin's watcher keeps its connection rights.
      expect(await connectRefusal(nats.url, watcher.credentials)).toBeUndefined()
      const app = createApp(restarted)
      const res = await app.handle(testRequest('http://localhost', 'GET', '/api/v1/user/msgbus/credentials', { token: ann!.token }))
      expect(await connectRefusal(nats.url, ((await res.json()) as Credentials).credentials)).toBeUndefined()
    } finally {
      await closeDeps(restarted)
    }
  })
})
