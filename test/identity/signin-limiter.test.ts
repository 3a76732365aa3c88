import { describe, expect, test } from 'bun:test'
import {
  checkPasswordAttempt,
  Messages as LimiterMessages,
  MAX_FAILURES_PER_ACCOUNT,
  MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS,
  MAX_FAILURES_PER_ADDRESS,
} from '../../src/identity/limiter/service'
import { basic, makeTestApp, PASSWORD } from '../support/app'
import { requestFrom, signInFrom } from '../support/source-address'

/** Attacker addresses that, each failing its full per-pair allowance, reach the account-wide limit. */
const ATTACKERS = MAX_FAILURES_PER_ACCOUNT / MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS

async function aliceOnRealPort(env: Record<string, string> = {}) {
  const t = await makeTestApp(env)
  await t.users('alice')
  return { t, base: await t.listen() }
}

describe('distributed guessing cannot lock the owner out', () => {
  test(`${ATTACKERS} addresses × ${MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS} wrong passwords: the owner signs in from a new address → 200`, async () => {
    const { base } = await aliceOnRealPort()
    for (let a = 0; a < ATTACKERS; a++)
      for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++)
        expect((await signInFrom(`127.0.0.${10 + a}`, base, 'alice', 'guess')).status).toBe(422)
    expect((await signInFrom('127.0.0.200', base, 'alice', PASSWORD)).status).toBe(200)
  }, 30_000)

  test('past the account-wide limit an address that has failed is refused, even with the right password → 429', async () => {
    const { base } = await aliceOnRealPort()
    // Three guesses from each of ten addresses: no pair is at its own limit, the account is.
    for (let a = 0; a < MAX_FAILURES_PER_ACCOUNT / 3; a++)
      for (let i = 0; i < 3; i++) expect((await signInFrom(`127.0.0.${10 + a}`, base, 'alice', 'guess')).status).toBe(422)
    const res = await signInFrom('127.0.0.10', base, 'alice', PASSWORD)
    expect(res.status).toBe(429)
    expect(res.headers['retry-after']).toBeDefined()
  }, 30_000)

  test('past the account-wide limit a fresh address gets one guess, then it is refused too', async () => {
    const { base } = await aliceOnRealPort()
    for (let a = 0; a < ATTACKERS; a++)
      for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) await signInFrom(`127.0.0.${10 + a}`, base, 'alice', 'guess')
    expect((await signInFrom('127.0.0.77', base, 'alice', 'guess')).status).toBe(422)
    expect((await signInFrom('127.0.0.77', base, 'alice', 'guess')).status).toBe(429)
  }, 30_000)

  test('an address the owner signed in from stays usable past the account-wide limit, after a typo of their own', async () => {
    const { base } = await aliceOnRealPort()
    expect((await signInFrom('127.0.0.5', base, 'alice', PASSWORD)).status).toBe(200)
    for (let a = 0; a < ATTACKERS; a++)
      for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++) await signInFrom(`127.0.0.${10 + a}`, base, 'alice', 'guess')
    expect((await signInFrom('127.0.0.5', base, 'alice', 'typo')).status).toBe(422)
    expect((await signInFrom('127.0.0.5', base, 'alice', PASSWORD)).status).toBe(200)
  }, 30_000)
})

describe('the account-wide limit, unit by unit', () => {
  test(`after ${MAX_FAILURES_PER_ACCOUNT} failures from many addresses, each of those addresses is refused`, async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const guess = (address: string) => checkPasswordAttempt(t.deps, alice.user, 'alice', 'guess', address)
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT; i++) expect(await guess(`203.0.113.${i}`)).toBe(false)
    await expect(guess('203.0.113.3')).rejects.toThrow(LimiterMessages.tooManyAttempts)
    expect(await guess('198.51.100.7')).toBe(false)
    await expect(guess('198.51.100.7')).rejects.toThrow(LimiterMessages.tooManyAttempts)
  }, 30_000)
})

describe('PLATFORM_TRUSTED_PROXIES', () => {
  test('behind a trusted proxy, clients named by X-Forwarded-For are limited one by one', async () => {
    const { base } = await aliceOnRealPort({ PLATFORM_TRUSTED_PROXIES: '127.0.0.1/32' })
    const via = (client: string) => ({ 'x-forwarded-for': client })
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++)
      expect((await signInFrom('127.0.0.1', base, 'alice', 'guess', via('198.51.100.9'))).status).toBe(422)
    expect((await signInFrom('127.0.0.1', base, 'alice', PASSWORD, via('198.51.100.9'))).status).toBe(429)
    expect((await signInFrom('127.0.0.1', base, 'alice', PASSWORD, via('198.51.100.10'))).status).toBe(200)
  }, 30_000)

  test('a forged leftmost hop does not give a client a new identity: the proxy-appended hop counts', async () => {
    const { base } = await aliceOnRealPort({ PLATFORM_TRUSTED_PROXIES: '127.0.0.1' })
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++)
      await signInFrom('127.0.0.1', base, 'alice', 'guess', { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.9` })
    expect((await signInFrom('127.0.0.1', base, 'alice', PASSWORD, { 'x-forwarded-for': '10.9.9.99, 198.51.100.9' })).status).toBe(429)
  }, 30_000)

  test('from an untrusted peer, X-Forwarded-For is ignored: spoofed hops do not reset the count', async () => {
    const { base } = await aliceOnRealPort({ PLATFORM_TRUSTED_PROXIES: '127.0.0.1' })
    for (let i = 0; i < MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS; i++)
      await signInFrom('127.0.0.3', base, 'alice', 'guess', { 'x-forwarded-for': `198.51.100.${i}` })
    expect((await signInFrom('127.0.0.3', base, 'alice', PASSWORD, { 'x-forwarded-for': '198.51.100.200' })).status).toBe(429)
  }, 30_000)

  test(`one address spread over accounts is still stopped after ${MAX_FAILURES_PER_ADDRESS} failures`, async () => {
    const { base } = await aliceOnRealPort()
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) await signInFrom('127.0.0.4', base, `ghost${i}`, 'x')
    expect((await signInFrom('127.0.0.4', base, 'alice', PASSWORD)).status).toBe(429)
  }, 30_000)

  test('a bad PLATFORM_TRUSTED_PROXIES entry is a configuration error naming it', async () => {
    const { loadConfig } = await import('../../src/config')
    expect(() => loadConfig({ PLATFORM_TRUSTED_PROXIES: '10.0.0.0/8, proxy.local' })).toThrow(/PLATFORM_TRUSTED_PROXIES.*proxy\.local/)
  })
})

describe('the password-hashing line under a flood', () => {
  test('120 anonymous sign-ins for unknown users from 120 addresses at once: a real user still signs in → 200', async () => {
    const { base } = await aliceOnRealPort()
    const flood = Array.from({ length: 120 }, (_, i) => signInFrom(`127.0.1.${i + 1}`, base, `nobody${i}`, 'x'))
    // Once the flood has been turned away somewhere, the line is as full as it gets.
    await Promise.race(
      flood.map(async (reply) => {
        if ((await reply).status !== 503) await new Promise(() => {})
      }),
    )
    const owner = await signInFrom('127.0.0.250', base, 'alice', PASSWORD)
    const statuses = (await Promise.all(flood)).map((r) => r.status)
    expect(owner.status).toBe(200)
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0)
    expect(statuses.every((s) => s === 404 || s === 503)).toBe(true)
  }, 30_000)

  test('one address cannot hold more than its share of the line: its excess is 503 with Retry-After', async () => {
    const t = await makeTestApp()
    const names = Array.from({ length: MAX_FAILURES_PER_ADDRESS }, (_, i) => `user${i}`)
    await t.users(...names)
    const base = await t.listen()
    // One wrong guess on each of many accounts: the limiter lets them all through, the line must not.
    const replies = await Promise.all(names.map((name) => signInFrom('127.0.0.6', base, name, 'guess')))
    const busy = replies.filter((r) => r.status === 503)
    expect(busy.length).toBeGreaterThan(0)
    expect(busy[0].headers['retry-after']).toBe('1')
  }, 30_000)
})

describe('parallel attempts on a real port', () => {
  const basicFrom = (base: string, password: string) =>
    requestFrom('127.0.0.1', `${base}/api/v1/user`, { headers: { authorization: basic('alice', password) } })

  test('a script sends 12 Basic requests with the right password at once → 12 × 200, none refused as too many failures', async () => {
    const { base } = await aliceOnRealPort()
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => basicFrom(base, PASSWORD)))).map((r) => r.status)
    expect(statuses).toEqual(Array(12).fill(200))
  }, 30_000)

  test(`${MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS - 1} typos and 8 right passwords at once → the typos 401, the right ones 200, none 429`, async () => {
    const { base } = await aliceOnRealPort()
    const passwords = [...Array(MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS - 1).fill('typo'), ...Array(8).fill(PASSWORD)]
    const statuses = (await Promise.all(passwords.map((p) => basicFrom(base, p)))).map((r) => r.status)
    expect(statuses).toEqual(passwords.map((p) => (p === PASSWORD ? 200 : 401)))
  }, 30_000)

  test(`a guesser sends 12 wrong passwords at once → exactly ${MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS} are checked (401), the rest 429; then the right password is 429 too`, async () => {
    const { base } = await aliceOnRealPort()
    const statuses = (await Promise.all(Array.from({ length: 12 }, (_, i) => basicFrom(base, `guess${i}`)))).map((r) => r.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS)
    expect(statuses.filter((s) => s === 429)).toHaveLength(12 - MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS)
    expect((await basicFrom(base, PASSWORD)).status).toBe(429)
  }, 30_000)

  test('12 requests at once with a token as the Basic password → 12 × 200 (tokens take no place under the limiter)', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const base = await t.listen()
    const replies = await Promise.all(Array.from({ length: 12 }, () => basicFrom(base, alice.token)))
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(200))
  }, 30_000)
})
