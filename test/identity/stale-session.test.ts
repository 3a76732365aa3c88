import { describe, expect, test } from 'bun:test'
import { startSession } from '../../src/identity/sessions/service'
import { makeTestApp, PASSWORD } from '../support/app'

describe('a browser holding a dead session cookie', () => {
  test('a user whose session was revoked signs in again with the old cookie still sent → 200 and a new session', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const old = await startSession(t.deps.db, alice.user, { ip: '', userAgent: 'laptop', remember: false }, t.clock.seconds())
    const cookie = `platform_session=${old.secret}; _csrf=${old.csrfToken}`
    expect((await t.as(alice).delete(`/api/v1/user/settings/security/sessions/${old.session.sid}/revoke`)).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie } })).status).toBe(401)
    const res = await t.request('POST', '/api/v1/user/signin', { headers: { cookie }, body: { username: 'alice', password: PASSWORD } })
    expect(res.status).toBe(200)
    const fresh = /platform_session=([^;]+)/.exec(res.headers.getSetCookie().join('\n'))?.[1]
    expect(fresh).toBeDefined()
    expect(fresh).not.toBe(old.secret)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: `platform_session=${fresh}` } })).status).toBe(200)
  })

  test('an attacker pre-seeds a session cookie, the victim signs in → a new value; the seeded one stays unauthenticated (T11)', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const seeded = 'attacker-chosen-session-value'
    const res = await t.request('POST', '/api/v1/user/signin', {
      headers: { cookie: `platform_session=${seeded}` },
      body: { username: 'alice', password: PASSWORD },
    })
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie().join('\n')).not.toContain(seeded)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: `platform_session=${seeded}` } })).status).toBe(401)
  })

  test('a dead session cookie with a wrong password → still 422, not a session', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const res = await t.request('POST', '/api/v1/user/signin', {
      headers: { cookie: 'platform_session=dead' },
      body: { username: 'alice', password: 'wrong password' },
    })
    expect(res.status).toBe(422)
    expect(res.headers.getSetCookie()).toEqual([])
  })

  test('an invalid token on sign-in → still 401', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const res = await t.request('POST', '/api/v1/user/signin', { token: '0'.repeat(40), body: { username: 'alice', password: PASSWORD } })
    expect(res.status).toBe(401)
  })
})

describe('a dead session cookie elsewhere', () => {
  test('a browser with a revoked session cookie calls a public route → 401 that also expires the cookie, so the next call works', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const old = await startSession(t.deps.db, alice.user, { ip: '', userAgent: 'laptop', remember: false }, t.clock.seconds())
    await t.as(alice).delete(`/api/v1/user/settings/security/sessions/${old.session.sid}/revoke`)
    const res = await t.request('GET', '/api/v1/user/login-method?username=alice', {
      headers: { cookie: `platform_session=${old.secret}` },
    })
    expect(res.status).toBe(401)
    const cleared = res.headers.getSetCookie().find((c) => c.startsWith('platform_session='))
    expect(cleared).toBeDefined()
    expect(cleared).toMatch(/^platform_session=;/)
    expect(cleared).toMatch(/Max-Age=0/i)
    expect(cleared).toMatch(/HttpOnly/i)
    expect((await t.request('GET', '/api/v1/user/login-method?username=alice')).status).toBe(200)
  })

  test('an invalid token → 401 without touching cookies', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/api/v1/users/search', { token: '0'.repeat(40) })
    expect(res.status).toBe(401)
    expect(res.headers.getSetCookie()).toEqual([])
  })
})
