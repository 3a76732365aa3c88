import { describe, expect, spyOn, test } from 'bun:test'
import { twoFactors } from '../../db/schema'
import {
  checkPasswordAttempt,
  FAILURE_WINDOW_SECONDS,
  Messages as LimiterMessages,
  MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS,
  MAX_FAILURES_PER_ADDRESS,
} from '../../src/identity/limiter/service'
import { Messages } from '../../src/identity/signin/service'
import { updateUser } from '../../src/identity/store'
import { basic, makeTestApp, PASSWORD, type TestApp } from '../support/app'
import { makeHttpTestApp } from './http'

const signIn = (t: TestApp, username: string, password = PASSWORD, extra: Record<string, unknown> = {}) =>
  t.request('POST', '/api/v1/user/signin', { body: { username, password, ...extra } })

/** What `run` returned and the hashes the password checks it caused verified against (Bun's argon2, observed, not replaced). */
async function passwordChecksDuring<T>(run: () => Promise<T>): Promise<{ result: T; hashes: string[] }> {
  const verify = spyOn(Bun.password, 'verify')
  try {
    const result = await run()
    return { result, hashes: verify.mock.calls.map(([, hash]) => String(hash)) }
  } finally {
    verify.mockRestore()
  }
}

/** name=value pairs of the Set-Cookie headers, and the raw headers. */
function cookiesOf(res: Response): { values: Record<string, string>; raw: string[] } {
  const raw = res.headers.getSetCookie()
  const values: Record<string, string> = {}
  for (const line of raw) {
    const [pair] = line.split(';')
    const eq = pair.indexOf('=')
    values[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return { values, raw }
}

describe('POST /api/v1/user/signin', () => {
  test('right password → 200, empty body, HttpOnly session cookie and readable _csrf cookie; the session works', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await signIn(t, 'alice')
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    const { values, raw } = cookiesOf(res)
    expect(raw.find((c) => c.startsWith('platform_session='))).toMatch(/HttpOnly/i)
    expect(raw.find((c) => c.startsWith('platform_session='))).toMatch(/SameSite=Lax/i)
    expect(raw.find((c) => c.startsWith('_csrf='))).not.toMatch(/HttpOnly/i)
    const cookie = `platform_session=${values.platform_session}; _csrf=${values._csrf}`
    const me = await t.request('GET', '/api/v1/user', { headers: { cookie } })
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('alice')
    const post = await t.request('POST', '/api/v1/user/emails', {
      headers: { cookie, 'x-csrf-token': values._csrf },
      body: { emails: ['x@y.test'] },
    })
    expect(post.status).toBe(201)
  })

  test('sign-in by email, any case → 200; by a secondary address → 200', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await signIn(t, 'ALICE@example.com')).status).toBe(200)
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['second@x.test'] })
    expect((await signIn(t, 'second@x.test')).status).toBe(200)
  })

  test('remember → the cookie lives 30 days; otherwise 24 hours', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    expect(cookiesOf(await signIn(t, 'alice', PASSWORD, { remember: true })).raw.join('\n')).toContain(`Max-Age=${30 * 24 * 3600}`)
    expect(cookiesOf(await signIn(t, 'alice')).raw.join('\n')).toContain(`Max-Age=${24 * 3600}`)
  })

  test('sign-in records last_login', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await signIn(t, 'alice')
    const body = await (await t.as(alice).get('/api/v1/user')).json()
    expect(body.last_login).not.toBe('1970-01-01T00:00:00Z')
  })

  test('unknown user → 404', async () => {
    const t = await makeHttpTestApp()
    const res = await signIn(t, 'nobody')
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(Messages.userNotFound)
  })

  test('wrong password → 422 and no cookie', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await signIn(t, 'alice', 'wrong password')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.wrongPassword)
    expect(cookiesOf(res).raw).toEqual([])
  })

  test('prohibited, inactive, and TOTP-enrolled accounts → 405 without a session', async () => {
    const t = await makeHttpTestApp()
    const [p, i, z] = await t.users('prohibited', 'inactive', 'twofa')
    await t.deps.db.write(async (tx) => {
      await updateUser(tx, p.user.id, { prohibitLogin: true })
      await updateUser(tx, i.user.id, { isActive: false })
      await tx.insert(twoFactors).values({ uid: z.user.id, sealedSecret: 'x' })
    })
    for (const [name, message] of [
      ['prohibited', Messages.prohibited],
      ['inactive', Messages.inactive],
      ['twofa', Messages.twoFactor],
    ]) {
      const res = await signIn(t, name)
      expect(res.status).toBe(405)
      expect((await res.json()).message).toBe(message)
      // Only the two-factor account gets a sign-in ticket (for its second step), and nobody a session.
      expect(Object.keys(cookiesOf(res).values)).toEqual(name === 'twofa' ? ['platform_signin_ticket'] : [])
    }
  })

  test('a prohibited account with a wrong password → 422, never revealing the state', async () => {
    const t = await makeHttpTestApp()
    const [p] = await t.users('prohibited')
    await t.deps.db.write((tx) => updateUser(tx, p.user.id, { prohibitLogin: true }))
    expect((await signIn(t, 'prohibited', 'nope')).status).toBe(422)
  })

  test('an account whose primary email another account already holds → 409 and no session', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(bob).send('POST', '/api/v1/user/emails', { emails: ['legacy@x.test'] })
    // A row written around insertUser (as data from before the email table) claims bob's address.
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { email: 'legacy@x.test' }))
    const res = await signIn(t, 'alice')
    expect(res.status).toBe(409)
    expect(cookiesOf(res).raw).toEqual([])
  })

  test('an account without an address row gets its primary address bound at sign-in', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { email: 'unbound@x.test' }))
    expect((await signIn(t, 'alice')).status).toBe(200)
    const taken = await t.as(bob).send('POST', '/api/v1/user/emails', { emails: ['unbound@x.test'] })
    expect(taken.status).toBe(422)
  })

  test('missing fields or malformed JSON → 422', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice' } })).status).toBe(422)
    expect((await t.request('POST', '/api/v1/user/signin', { body: '{', headers: { 'content-type': 'application/json' } })).status).toBe(
      422,
    )
  })
})

describe('brute-force protection', () => {
  test(`after ${MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS} wrong passwords the account is locked → 429 with Retry-After, even with the right password`, async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) expect((await signIn(t, 'alice', `wrong${i}`)).status).toBe(422)
    const res = await signIn(t, 'alice')
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await res.json()).message).toBe(LimiterMessages.tooManyAttempts)
  })

  test('the lock is checked before hashing: a locked request verifies no password hash', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) await signIn(t, 'alice', `wrong${i}`)
    const verified = await passwordChecksDuring(() => signIn(t, 'alice', 'again'))
    expect(verified.result.status).toBe(429)
    expect(verified.hashes).toEqual([])
  })

  test('Basic password guesses count too: locked → 429 on any route', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++)
      expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', `wrong${i}`) } })).status).toBe(401)
    const res = await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', PASSWORD) } })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).not.toBeNull()
    expect((await signIn(t, 'alice')).status).toBe(429)
  })

  test('failures by name, by email and by Basic count against one account', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    await signIn(t, 'alice', 'wrong1')
    await signIn(t, 'ALICE@example.com', 'wrong2')
    await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', 'wrong3') } })
    await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice@example.com', 'wrong4') } })
    await signIn(t, 'Alice', 'wrong5')
    expect((await signIn(t, 'alice')).status).toBe(429)
  })

  test('a success resets the account count', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS - 1; i++) await signIn(t, 'alice', `wrong${i}`)
    expect((await signIn(t, 'alice')).status).toBe(200)
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS - 1; i++) await signIn(t, 'alice', `wrong${i}`)
    expect((await signIn(t, 'alice')).status).toBe(200)
  })

  test(`one client address guessing across many accounts is locked after ${MAX_FAILURES_PER_ADDRESS} failures (real socket)`, async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const base = await t.listen()
    const attempt = (username: string, password: string) =>
      fetch(`${base}/api/v1/user/signin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      })
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) expect((await attempt(`ghost${i}`, 'x')).status).toBe(404)
    const res = await attempt('alice', PASSWORD)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).not.toBeNull()
  }, 30_000)

  test('unknown user and wrong password cost a password hash alike: one argon2id verification with the same parameters', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const unknown = await passwordChecksDuring(() => signIn(t, 'nobody', 'x'))
    const wrong = await passwordChecksDuring(() => signIn(t, 'alice', 'x'))
    expect([unknown.result.status, wrong.result.status]).toEqual([404, 422])
    // `$argon2id$v=19$m=…,t=…,p=…$salt$hash`: all but salt and hash say what the check costs.
    const cost = (hash: string) => hash.split('$').slice(0, 4).join('$')
    expect(unknown.hashes.map(cost)).toEqual(wrong.hashes.map(cost))
    expect(wrong.hashes.map(cost)).toEqual([expect.stringMatching(/^\$argon2id\$/)])
  })
})

describe('GET /api/v1/user/signout', () => {
  test('with the session cookie → 200, cookies cleared, the session no longer works', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const { values } = cookiesOf(await signIn(t, 'alice'))
    const cookie = `platform_session=${values.platform_session}; _csrf=${values._csrf}`
    const res = await t.request('GET', '/api/v1/user/signout', { headers: { cookie } })
    expect(res.status).toBe(200)
    const cleared = cookiesOf(res).raw
    expect(cleared.find((c) => c.startsWith('platform_session='))).toMatch(/Max-Age=0/)
    expect(cleared.find((c) => c.startsWith('_csrf='))).toMatch(/Max-Age=0/)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie } })).status).toBe(401)
  })

  test('with a token → 200 and the token keeps working', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).get('/api/v1/user/signout')).status).toBe(200)
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(200)
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('GET', '/api/v1/user/signout')).status).toBe(401)
  })
})

describe('GET /api/v1/user/login-method', () => {
  test.each(['?username=alice', '?orgname=acme', '?username=alice@example.com&orgname=acme'])('%s → 200 method password', async (query) => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await t.request('GET', `/api/v1/user/login-method${query}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ method: 'password' })
  })

  test.each(['', '?username=', '?orgname=%20'])('neither given (%p) → 400', async (query) => {
    const t = await makeHttpTestApp()
    const res = await t.request('GET', `/api/v1/user/login-method${query}`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.loginMethodInput)
  })
})

describe('the sign-in limiter across addresses', () => {
  const guesser = async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    return { t, guess: (address: string, password = 'wrong') => checkPasswordAttempt(t.deps, alice.user, 'alice', password, address) }
  }

  test("one attacker's wrong passwords lock only their own address out of the account, not the owner's", async () => {
    const { guess } = await guesser()
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) expect(await guess('203.0.113.9')).toBe(false)
    await expect(guess('203.0.113.9')).rejects.toThrow(LimiterMessages.tooManyAttempts)
    expect(await guess('198.51.100.7', PASSWORD)).toBe(true)
  })

  test('the window ends: after it, the same address may try again', async () => {
    const { t, guess } = await guesser()
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) await guess('203.0.113.9')
    await expect(guess('203.0.113.9')).rejects.toThrow(LimiterMessages.tooManyAttempts)
    t.clock.advance(FAILURE_WINDOW_SECONDS * 1000)
    expect(await guess('203.0.113.9', PASSWORD)).toBe(true)
  })
})

describe('parallel guesses', () => {
  test('40 wrong passwords sent at once from one address: exactly the limit are evaluated, the rest are 429', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: 'not the password' } }),
      ),
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 422)).toHaveLength(MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS)
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS)
  })

  test('a correct password gives its slot back: the owner signing in repeatedly is never limited', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS + 3; i++)
      expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })).status).toBe(200)
  })
})
