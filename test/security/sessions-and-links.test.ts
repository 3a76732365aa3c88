import { describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { sessions } from '../../db/schema'
import { Messages as LinkMessages } from '../../src/identity/security/account-links/service'
import { insertLink } from '../../src/identity/security/account-links/store'
import { Messages as SessionMessages } from '../../src/identity/security/sessions/service'
import { SESSION_IDLE_SECONDS, startSession } from '../../src/identity/sessions/service'
import { updateUser } from '../../src/identity/store'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

const BASE = '/api/v1/user/settings/security'

/** Signs `who` in through the session service; returns headers that act as that browser. */
async function browser(t: TestApp, who: TestUser, userAgent: string) {
  const started = await startSession(t.deps.db, who.user, { ip: '192.0.2.7', userAgent, remember: false }, t.clock.seconds())
  const headers = { cookie: `platform_session=${started.secret}; _csrf=${started.csrfToken}`, 'x-csrf-token': started.csrfToken }
  return { sid: started.session.sid, id: started.session.id, headers }
}

describe('sessions', () => {
  test('a signed-in browser lists its sessions → its own marked current, others not', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const laptop = await browser(t, alice, 'Laptop/1.0')
    const phone = await browser(t, alice, 'Phone/2.0')
    const res = await t.request('GET', `${BASE}/sessions/`, { headers: laptop.headers })
    expect(res.status).toBe(200)
    const list = await res.json()
    expect(list).toHaveLength(2)
    const mine = list.find((s: { sid: string }) => s.sid === laptop.sid)
    expect(mine).toMatchObject({ sid: laptop.sid, ip: '192.0.2.7', userAgent: 'Laptop/1.0', current: true })
    expect(mine.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(mine.lastSeenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(list.find((s: { sid: string }) => s.sid === phone.sid).current).toBe(false)
    expect(JSON.stringify(list)).not.toContain(laptop.headers['x-csrf-token'])
  })

  test("a token caller lists sessions → none is current; other users' sessions are not listed", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await browser(t, alice, 'A')
    await browser(t, bob, 'B')
    const list = await (await t.as(alice).get(`${BASE}/sessions/`)).json()
    expect(list.map((s: { userAgent: string; current: boolean }) => [s.userAgent, s.current])).toEqual([['A', false]])
  })

  test('revoking another session → 200 the remaining ones; its cookie then → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const laptop = await browser(t, alice, 'Laptop')
    const phone = await browser(t, alice, 'Phone')
    const res = await t.request('DELETE', `${BASE}/sessions/${phone.sid}/revoke`, { headers: laptop.headers })
    expect(res.status).toBe(200)
    expect((await res.json()).map((s: { sid: string; current: boolean }) => [s.sid, s.current])).toEqual([[laptop.sid, true]])
    expect((await t.request('GET', '/api/v1/user', { headers: phone.headers })).status).toBe(401)
  })

  test('revoking the current session → 200 without it; the cookie then → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const laptop = await browser(t, alice, 'Laptop')
    const res = await t.request('DELETE', `${BASE}/sessions/${laptop.sid}/revoke`, { headers: laptop.headers })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([])
    expect((await t.request('GET', `${BASE}/sessions/`, { headers: laptop.headers })).status).toBe(401)
  })

  test("revoking another user's or an unknown sid → 404, nothing ended", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const bobs = await browser(t, bob, 'B')
    const res = await t.as(alice).delete(`${BASE}/sessions/${bobs.sid}/revoke`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(SessionMessages.sessionNotFound)
    expect((await t.as(alice).delete(`${BASE}/sessions/nope/revoke`)).status).toBe(404)
    expect((await t.request('GET', '/api/v1/user', { headers: bobs.headers })).status).toBe(200)
  })

  test('a cookie-authenticated revoke without the CSRF header → 403, nothing ended', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const laptop = await browser(t, alice, 'Laptop')
    const res = await t.request('DELETE', `${BASE}/sessions/${laptop.sid}/revoke`, { headers: { cookie: laptop.headers.cookie } })
    expect(res.status).toBe(403)
    expect((await t.request('GET', '/api/v1/user', { headers: laptop.headers })).status).toBe(200)
  })

  test('an expired or idle session is not listed and its cookie → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const expired = await browser(t, alice, 'Expired')
    const idle = await browser(t, alice, 'Idle')
    await browser(t, alice, 'Live')
    const now = t.clock.seconds()
    await t.deps.db.write(async (tx) => {
      await tx
        .update(sessions)
        .set({ expiresAt: now - 1 })
        .where(eq(sessions.id, expired.id))
      await tx
        .update(sessions)
        .set({ lastSeenAt: now - SESSION_IDLE_SECONDS - 1 })
        .where(eq(sessions.id, idle.id))
    })
    const list = await (await t.as(alice).get(`${BASE}/sessions/`)).json()
    expect(list.map((s: { userAgent: string }) => s.userAgent)).toEqual(['Live'])
    expect((await t.request('GET', '/api/v1/user', { headers: expired.headers })).status).toBe(401)
    expect((await t.request('GET', '/api/v1/user', { headers: idle.headers })).status).toBe(401)
  })

  test.each([
    ['GET', `${BASE}/sessions/`],
    ['DELETE', `${BASE}/sessions/abc/revoke`],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    expect((await t.request(method, path)).status).toBe(401)
  })
})

describe('linked accounts', () => {
  const link = (t: TestApp, who: TestUser, sourceId: number, provider = 'github') =>
    t.deps.db.write((tx) =>
      insertLink(tx, { uid: who.user.id, sourceId, provider, sourceName: `sso-${sourceId}`, externalId: `ext-${who.name}-${sourceId}` }),
    )

  test('a user lists links → AccountLink per login source', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await link(t, alice, 7, 'openidConnect')
    await link(t, bob, 8)
    const res = await t.as(alice).get(`${BASE}/account_link`)
    expect(res.status).toBe(200)
    const list = await res.json()
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({ id: 7, provider: 'openidConnect', name: 'sso-7', externalID: 'ext-alice-7' })
    expect(list[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  test('a user without links → []', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect(await (await t.as(alice).get(`${BASE}/account_link`)).json()).toEqual([])
  })

  test('unlinking with a password set → 200 no body, link gone', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await link(t, alice, 7)
    const res = await t.as(alice).send('POST', `${BASE}/account_link`, { id: 7 })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect(await (await t.as(alice).get(`${BASE}/account_link`)).json()).toEqual([])
  })

  test('unlinking the only way to sign in (no password, one link) → 422, link kept', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { passwordHash: '' }))
    await link(t, alice, 7)
    const res = await t.as(alice).send('POST', `${BASE}/account_link`, { id: 7 })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(LinkMessages.onlySignIn)
    expect(await (await t.as(alice).get(`${BASE}/account_link`)).json()).toHaveLength(1)
  })

  test('no password but two links → unlinking one is allowed → 200', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { passwordHash: '' }))
    await link(t, alice, 7)
    await link(t, alice, 9)
    expect((await t.as(alice).send('POST', `${BASE}/account_link`, { id: 7 })).status).toBe(200)
    expect((await (await t.as(alice).get(`${BASE}/account_link`)).json()).map((l: { id: number }) => l.id)).toEqual([9])
  })

  test("unlinking a source the user is not linked to (or another user's link) → 404", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await link(t, bob, 7)
    const res = await t.as(alice).send('POST', `${BASE}/account_link`, { id: 7 })
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(LinkMessages.linkNotFound)
    expect(await (await t.as(bob).get(`${BASE}/account_link`)).json()).toHaveLength(1)
  })

  test.each([[{}], [{ id: 'x' }], [{ id: 0 }]])('a malformed body %j → 422', async (body) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', `${BASE}/account_link`, body)).status).toBe(422)
  })

  test.each([
    ['GET', `${BASE}/account_link`],
    ['POST', `${BASE}/account_link`],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    expect((await t.request(method, path, { body: method === 'POST' ? { id: 1 } : undefined })).status).toBe(401)
  })
})
