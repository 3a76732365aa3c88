import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { closeDeps } from '../../src/app'
import { checkPasswordAttempt, Messages as LimiterMessages } from '../../src/identity/limiter/service'
import { ensureFirstAdmin } from '../../src/identity/service'
import { countUsers } from '../../src/identity/store'
import { makeTestApp, PASSWORD, type TestApp } from '../support/app'
import { twoApps } from './support'

const ADDRESS = '203.0.113.9'

describe('the sign-in limiter', () => {
  test('3 wrong passwords on one process and 2 on the other → the pair is locked on both, the right password 429', async () => {
    const [a, b] = await twoApps()
    const [alice] = await a.users('alice')
    const guess = (t: TestApp, password = 'wrong') => checkPasswordAttempt(t.deps, alice.user, 'alice', password, ADDRESS)
    for (const t of [a, a, a, b, b]) expect(await guess(t)).toBe(false)
    await expect(guess(a, PASSWORD)).rejects.toThrow(LimiterMessages.tooManyAttempts)
    await expect(guess(b, PASSWORD)).rejects.toThrow(LimiterMessages.tooManyAttempts)
  })

  test('a locked-out address stays locked when the server restarts', async () => {
    const a = await makeTestApp()
    const [alice] = await a.users('alice')
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(a.deps, alice.user, 'alice', 'wrong', ADDRESS)
    await closeDeps(a.deps)
    const restarted = await makeTestApp({ PLATFORM_DATA_DIR: a.config.dataDir })
    await expect(checkPasswordAttempt(restarted.deps, alice.user, 'alice', PASSWORD, ADDRESS)).rejects.toThrow(
      LimiterMessages.tooManyAttempts,
    )
  })
})

describe('second-factor sign-in', () => {
  const SECURITY = '/api/v1/user/settings/security'
  const ticketOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((pair) => pair.startsWith('platform_signin_ticket='))
      ?.slice('platform_signin_ticket='.length)

  test('the password step on one process, the TOTP step on the other → 200 and a session valid on both', async () => {
    const [a, b] = await twoApps()
    const [alice] = await a.users('alice')
    const { secret } = await (await a.as(alice).get(`${SECURITY}/twofa/enroll`)).json()
    expect((await a.as(alice).send('POST', `${SECURITY}/twofa/enroll`, { passcode: await generate({ secret }) })).status).toBe(200)
    const step1 = await a.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })
    expect(step1.status).toBe(405)
    const passcode = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 })
    const step2 = await b.request('POST', '/api/v1/user/signin/two-factor', {
      body: { passcode },
      headers: { cookie: `platform_signin_ticket=${ticketOf(step1)}` },
    })
    expect(step2.status).toBe(200)
    const session = step2.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    for (const t of [a, b]) expect((await t.request('GET', '/api/v1/user', { headers: { cookie: session } })).status).toBe(200)
  })
})

describe('start-up', () => {
  test('two processes start on an empty database at once → one creates the first site admin, neither fails', async () => {
    // bun:sqlite: the libSQL driver waits for another connection's lock inside SQLite, which one test process cannot serve.
    const [a, b] = await twoApps()
    const seed = { username: 'admin', password: 'admin-password-1', email: 'admin@localhost' }
    const results = await Promise.all([ensureFirstAdmin(a.deps.db, seed), ensureFirstAdmin(b.deps.db, seed)])
    expect(results.map((r) => r.created).sort()).toEqual([false, true])
    expect(await countUsers(a.deps.db.read)).toBe(1)
  })
})
