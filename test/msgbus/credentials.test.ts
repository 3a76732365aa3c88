import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { connect, credsAuthenticator } from '@nats-io/transport-node'
import { closeMsgbus } from '../../src/msgbus/bus'
import { Messages } from '../../src/msgbus/service'
import { makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { closesWithin, connectRefusal, delivers, nextWallSecond, wipeResolverDir } from '../support/nats'
import { startServer } from '../support/process'
import { eventually } from '../support/wait'
import { type Credentials, connected, credentialsOf, lab, tokensOf, userJwtOf } from './support'

// Real nats-server processes and waits on the clock: room for a loaded machine.
setDefaultTimeout(20000)

/** Ann's first credentials from one lab for the file (started on load, cleaned up when it ends). */
const issued = await (async () => {
  const { t, nats } = await lab()
  const [ann] = await t.users('ann')
  const answer = await t.as(ann!).get('/api/v1/user/msgbus/credentials')
  const res = { headers: answer.headers, creds: (await answer.json()) as Credentials }
  return { t, nats, ann: ann!, res }
})()

const revoke = (t: TestApp, who: TestUser, id: number) => t.as(who).send('POST', `/api/v1/user/settings/tokens/msgbus-tokens/${id}/revoke/`)

describe('without MSGBUS_URLS', () => {
  test('every message-bus route → 503 naming MSGBUS_URLS', async () => {
    const t = await makeTestApp()
    const [ann] = await t.users('ann')
    const admin = await t.admin()
    for (const [who, method, path] of [
      [ann, 'GET', '/api/v1/user/msgbus/credentials'],
      [admin, 'GET', '/api/v1/user/msgbus/admin_credentials'],
      [admin, 'GET', '/api/v1/user/msgbus/user_credentials'],
      [admin, 'GET', '/api/v1/user/msgbus/cluster-resource-history?owner=a&cluster=b'],
      [ann, 'GET', '/api/v1/user/settings/tokens/msgbus-tokens/'],
    ] as const) {
      const res = await t.as(who).send(method, path)
      expect(res.status).toBe(503)
      expect(((await res.json()) as { message: string }).message).toBe(Messages.notConfigured)
    }
  })

  test("revoking an existing key → 503 naming MSGBUS_URLS; an id that is not the caller's → 404", async () => {
    const t = await makeTestApp()
    const [ann] = await t.users('ann')
    const { insertMsgbusAccount } = await import('../../src/msgbus/store')
    const row = await t.deps.db.write((tx) =>
      insertMsgbusAccount(tx, {
        uid: ann.user.id,
        accountType: 'user',
        msgbusPubKey: 'UKEY',
        account: 'USERS',
        issuedAt: 1,
        expiresAt: 2,
      }),
    )
    const res = await t.as(ann).send('POST', `/api/v1/user/settings/tokens/msgbus-tokens/${row.id}/revoke/`)
    expect(res.status).toBe(503)
    expect(((await res.json()) as { message: string }).message).toBe(Messages.notConfigured)
    expect((await t.as(ann).send('POST', `/api/v1/user/settings/tokens/msgbus-tokens/${row.id + 1}/revoke/`)).status).toBe(404)
  })
})

describe('GET /api/v1/user/msgbus/credentials', () => {
  test('anonymous → 401; a token without user scope → 403', async () => {
    const { t } = await lab()
    expect((await t.request('GET', '/api/v1/user/msgbus/credentials')).status).toBe(401)
    const [ann] = await t.users('ann')
    const { mintToken } = await import('../../src/identity/tokens/service')
    const { plaintext } = await mintToken(t.deps.db, ann.user.id, { name: 'org-only', scopes: ['read:organization'] })
    expect((await t.request('GET', '/api/v1/user/msgbus/credentials', { token: plaintext })).status).toBe(403)
  })

  test("a user's credentials answer is not cached and names the bus endpoints", async () => {
    const { res, nats } = await issued
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.creds.msgbusEndpoints).toEqual([nats.url])
  })

  test('the credentials are a standard .creds file: LF only, trailing newline, a user seed', async () => {
    const text = Buffer.from((await issued).res.creds.credentials, 'base64').toString()
    expect(text).not.toContain('\r')
    expect(text.endsWith('\n')).toBe(true)
    expect(text).toContain('-----BEGIN USER NKEY SEED-----\nSU')
  })

  test("the .creds JWT is a user key's, for the user's own subjects, expiring in 24 h", async () => {
    const { res, ann, t } = await issued
    const claims = userJwtOf(res.creds)
    expect(claims.sub.startsWith('U')).toBe(true)
    // Measured from the JWT's own issue time: the file's lab issued it a while before this test runs.
    expect(claims.iat).toBeLessThanOrEqual(t.clock.seconds())
    expect(Math.abs(claims.exp! - claims.iat - 24 * 3600)).toBeLessThanOrEqual(1)
    expect(claims.nats.pub?.allow).toEqual([`user.${ann.user.id}.>`])
  })

  test('each request issues a new key', async () => {
    const { res, ann, t } = await issued
    const second = userJwtOf(await credentialsOf(t, ann))
    expect(second.sub).not.toBe(userJwtOf(res.creds).sub)
  })

  test("the credentials connect and round-trip on the user's own subjects", async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const nc = await connected(await credentialsOf(t, ann))
    expect(await delivers(nc, nc, `user.${ann.user.id}.hello`)).toBe(true)
  })

  test("ann cannot reach bob's subjects: her publish is refused and her subscription gets nothing", async () => {
    const { t } = await lab()
    const [ann, bob] = await t.users('ann', 'bob')
    const annConn = await connected(await credentialsOf(t, ann))
    const bobConn = await connected(await credentialsOf(t, bob))
    const violations: string[] = []
    void (async () => {
      for await (const s of annConn.status()) if (s.type === 'error') violations.push(String(s.error.message))
    })()
    expect(await delivers(annConn, bobConn, `user.${bob.user.id}.inbox`)).toBe(false)
    expect(await delivers(bobConn, annConn, `user.${bob.user.id}.secret`)).toBe(false)
    expect(violations.join('\n')).toContain('Permissions Violation')
    expect(annConn.isClosed()).toBe(false)
    expect(await delivers(bobConn, bobConn, `user.${bob.user.id}.own`)).toBe(true)
  })

  test('each issued key is listed for its user only, newest first, with the seven MsgbusAccount fields', async () => {
    const { t } = await lab()
    const [ann, bob] = await t.users('ann', 'bob')
    const first = userJwtOf(await credentialsOf(t, ann))
    const second = userJwtOf(await credentialsOf(t, ann))
    const res = await t.as(ann).get('/api/v1/user/settings/tokens/msgbus-tokens/')
    const rows = (await res.json()) as Record<string, unknown>[]
    expect(rows.map((r) => r.msgbusPubKey)).toEqual([second.sub, first.sub])
    expect(Object.keys(rows[0]!).sort()).toEqual(['accountType', 'clusterID', 'id', 'msgbusPubKey', 'productName', 'revoked', 'uid'])
    expect(rows[0]).toMatchObject({ uid: ann.user.id, accountType: 'user', clusterID: '', productName: '', revoked: false })
    expect(await tokensOf(t, bob)).toEqual([])
  })
})

describe('POST /api/v1/user/settings/tokens/msgbus-tokens/{id}/revoke/', () => {
  test('revoking drops the live connection within 1 s and refuses reconnects; others stay connected', async () => {
    const { t, nats } = await lab()
    const [ann, bob] = await t.users('ann', 'bob')
    const revoked = await credentialsOf(t, ann)
    const annOther = await connected(await credentialsOf(t, ann))
    const bobConn = await connected(await credentialsOf(t, bob))
    const live = await connected(revoked)
    const id = (await tokensOf(t, ann)).find((r) => r.msgbusPubKey === userJwtOf(revoked).sub)!.id
    const since = performance.now()
    expect((await revoke(t, ann, id)).status).toBe(200)
    expect(await closesWithin(live, 1000, since)).toBeLessThan(1000)
    expect(await connectRefusal(nats.url, revoked.credentials)).toMatch(/Authorization Violation/)
    expect(annOther.isClosed()).toBe(false)
    expect(bobConn.isClosed()).toBe(false)
    expect(await delivers(annOther, annOther, `user.${ann.user.id}.still`)).toBe(true)
    expect(await delivers(bobConn, bobConn, `user.${bob.user.id}.still`)).toBe(true)
    expect((await tokensOf(t, ann)).find((r) => r.id === id)!.revoked).toBe(true)
  })

  test('revoking twice → 200 both times; revocations accumulate; fresh credentials right after connect', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const a = await credentialsOf(t, ann)
    const b = await credentialsOf(t, ann)
    const [rowB, rowA] = await tokensOf(t, ann)
    expect((await revoke(t, ann, rowA!.id)).status).toBe(200)
    expect((await revoke(t, ann, rowA!.id)).status).toBe(200)
    expect((await revoke(t, ann, rowB!.id)).status).toBe(200)
    expect(await connectRefusal(nats.url, a.credentials)).toMatch(/Authorization Violation/)
    expect(await connectRefusal(nats.url, b.credentials)).toMatch(/Authorization Violation/)
    const fresh = await credentialsOf(t, ann)
    expect(await connectRefusal(nats.url, fresh.credentials)).toBeUndefined()
  })

  test("a revocation takes effect even when the app's clock runs an hour behind the wall clock (nats-server compares it with iat)", async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const creds = await credentialsOf(t, ann)
    const live = await connected(creds)
    t.clock.advance(-3600_000)
    const [row] = await tokensOf(t, ann)
    expect((await revoke(t, ann, row!.id)).status).toBe(200)
    expect(await closesWithin(live, 2000)).toBeDefined()
    expect(await connectRefusal(nats.url, creds.credentials)).toMatch(/Authorization Violation/)
  })

  test("another user's id or an unknown id → 404, and nothing is revoked", async () => {
    const { t, nats } = await lab()
    const [ann, bob] = await t.users('ann', 'bob')
    const creds = await credentialsOf(t, ann)
    const [row] = await tokensOf(t, ann)
    expect((await revoke(t, bob, row!.id)).status).toBe(404)
    expect((await revoke(t, ann, 999999)).status).toBe(404)
    expect((await t.as(ann).send('POST', '/api/v1/user/settings/tokens/msgbus-tokens/abc/revoke/')).status).toBe(422)
    expect(await connectRefusal(nats.url, creds.credentials)).toBeUndefined()
  })

  test('a revocation survives a nats-server restart (the server alone keeps it)', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const revoked = await credentialsOf(t, ann)
    const kept = await credentialsOf(t, ann)
    const row = (await tokensOf(t, ann)).find((r) => r.msgbusPubKey === userJwtOf(revoked).sub)!
    // On start the server keeps the stored account JWT only when it is newer than the preloaded
    // one, to the second: a revocation pushed in the second the configuration was printed would
    // lose (the platform's next reconcile restores it; here the server must keep it alone).
    await nextWallSecond()
    expect((await revoke(t, ann, row.id)).status).toBe(200)
    await closeMsgbus(t.deps)
    await nats.stop()
    await nats.start()
    expect(await connectRefusal(nats.url, revoked.credentials)).toMatch(/Authorization Violation/)
    expect(await connectRefusal(nats.url, kept.credentials)).toBeUndefined()
  })
})

describe('expiry', () => {
  test('credentials whose exp has passed are refused', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    // nats-server judges `exp` by its own clock: credentials minted a day and an hour ago are a day old.
    t.clock.advance(-25 * 3600_000)
    const creds = await credentialsOf(t, ann)
    expect(await connectRefusal(nats.url, creds.credentials)).toMatch(/Authorization Violation|Expired/)
  })

  test('a live connection is dropped when its credentials reach exp', async () => {
    const { t } = await lab({ MSGBUS_CREDENTIAL_TTL_SECONDS: '2' })
    const [ann] = await t.users('ann')
    const nc = await connected(await credentialsOf(t, ann))
    // The server's timer fires at exp, one to two seconds from now: the test awaits the close.
    expect(await closesWithin(nc, 4000)).toBeDefined()
  })
})

describe('reconciliation', () => {
  test('a platform start pushes every revocation again, even to a server that lost them all', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const revoked = await credentialsOf(t, ann)
    const kept = await credentialsOf(t, ann)
    const row = (await tokensOf(t, ann)).find((r) => r.msgbusPubKey === userJwtOf(revoked).sub)!
    expect((await revoke(t, ann, row.id)).status).toBe(200)
    await closeMsgbus(t.deps)
    await nats.stop()
    wipeResolverDir(nats)
    await nats.start()
    // Only the configuration's preload is left, printed before the revocation: the server forgot it.
    expect(await connectRefusal(nats.url, revoked.credentials)).toBeUndefined()
    const platform = await startServer(t.config.dataDir, { MSGBUS_URLS: nats.url })
    try {
      expect(await eventually(() => connectRefusal(nats.url, revoked.credentials), 5000)).toMatch(/Authorization Violation/)
      expect(await connectRefusal(nats.url, kept.credentials)).toBeUndefined()
    } finally {
      platform.child.kill()
      await platform.child.exited
    }
  })

  test('a running platform pushes every revocation again when its server comes back without them', async () => {
    const { t, nats } = await lab()
    const [ann] = await t.users('ann')
    const revoked = await credentialsOf(t, ann)
    const row = (await tokensOf(t, ann)).find((r) => r.msgbusPubKey === userJwtOf(revoked).sub)!
    expect((await revoke(t, ann, row.id)).status).toBe(200)
    await nats.stop()
    wipeResolverDir(nats)
    await nats.start()
    expect(await eventually(() => connectRefusal(nats.url, revoked.credentials), 5000)).toMatch(/Authorization Violation/)
  })
})

describe('deleted users', () => {
  test("a deleted user's keys stay refused, the revoked and the live ones, once the account is pushed again", async () => {
    const { t, nats } = await lab()
    const [ann, bob] = await t.users('ann', 'bob')
    const revoked = await credentialsOf(t, ann)
    const live = await credentialsOf(t, ann)
    const bobs = await credentialsOf(t, bob)
    const annRow = (await tokensOf(t, ann)).find((r) => r.msgbusPubKey === userJwtOf(revoked).sub)!
    expect((await revoke(t, ann, annRow.id)).status).toBe(200)
    const gone = await t.as(ann).send('POST', `/api/v1/user/settings/account/delete?password=${encodeURIComponent(PASSWORD)}`)
    expect(gone.status).toBeLessThan(300)
    // Any push of the account (here bob revoking one of his keys) carries the whole list again.
    await credentialsOf(t, bob)
    const bobRow = (await tokensOf(t, bob)).find((r) => r.msgbusPubKey === userJwtOf(bobs).sub)!
    expect((await revoke(t, bob, bobRow.id)).status).toBe(200)
    expect(await connectRefusal(nats.url, revoked.credentials)).toMatch(/Authorization Violation/)
    expect(await connectRefusal(nats.url, live.credentials)).toMatch(/Authorization Violation/)
  })
})

describe('reconnecting clients', () => {
  test('a client left to reconnect after its revocation is refused on every attempt and gives up', async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const creds = await credentialsOf(t, ann)
    // Default reconnect behaviour, only faster: the client retries after the server drops it.
    const nc = await connect({
      servers: creds.msgbusEndpoints,
      authenticator: credsAuthenticator(Buffer.from(creds.credentials, 'base64')),
      maxReconnectAttempts: 10,
      reconnectTimeWait: 100,
    })
    const statuses: string[] = []
    void (async () => {
      for await (const s of nc.status()) statuses.push(`${s.type} ${'error' in s ? String(s.error) : ''}`)
    })()
    const [row] = await tokensOf(t, ann)
    expect((await revoke(t, ann, row!.id)).status).toBe(200)
    const closedWith = await Promise.race([nc.closed(), Bun.sleep(10000).then(() => 'still open')])
    expect(String(closedWith)).toMatch(/Authorization Violation|Revoked/)
    expect(statuses.join('\n')).toMatch(/reconnecting/)
    expect(statuses.join('\n')).not.toMatch(/^reconnect /m)
  })
})

describe('secrets', () => {
  test('neither the seed nor the JWT of issued credentials reaches a log line, a list or an error', async () => {
    const { t } = await lab()
    const [ann] = await t.users('ann')
    const creds = await credentialsOf(t, ann)
    const text = Buffer.from(creds.credentials, 'base64').toString()
    const seed = /-----BEGIN USER NKEY SEED-----\n(.+)\n/.exec(text)![1]!
    const jwt = /-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(text)![1]!
    const [row] = await tokensOf(t, ann)
    await revoke(t, ann, row!.id)
    await revoke(t, ann, 999999)
    const seen = [...t.logs, JSON.stringify(await tokensOf(t, ann)), await (await revoke(t, ann, 0)).text()].join('\n')
    expect(seen).not.toContain(seed)
    expect(seen).not.toContain(jwt)
    expect(seen).not.toContain(creds.credentials)
  })
})
