import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { Messages as AuthMessages } from '../../src/identity/authenticate'
import { LOCK_SECONDS, MAX_FAILED_CODES, Messages } from '../../src/identity/security/two-factor/service'
import { startSession } from '../../src/identity/sessions/service'
import { basic, makeTestApp, PASSWORD, type TestApp } from '../support/app'
import { nextCode } from '../support/totp'
import { enrollTotp, totpUser } from './second-factor'

const BASE = '/api/v1/user/settings/security'

const basicOtp = (t: TestApp, name: string, otp?: string, header = 'X-Platform-OTP') =>
  t.request('GET', '/api/v1/user', { headers: { authorization: basic(name, PASSWORD), ...(otp === undefined ? {} : { [header]: otp }) } })

describe('TOTP enrollment', () => {
  test('a user starts enrollment → base32 secret and its QR code as a PNG data URL and as SVG; status still off', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).get(`${BASE}/twofa/enroll`)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(body.qrImage).toStartWith('data:image/png;base64,')
    const png = Buffer.from(body.qrImage.slice('data:image/png;base64,'.length), 'base64')
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    // The same code as SVG markup for pages under a strict CSP: no script, no style attribute, no external reference.
    expect(body.qrSvg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"')
    expect(body.qrSvg).not.toMatch(/<script|style=|href=/i)
    const status = await (await t.as(alice).get(`${BASE}/`)).json()
    expect(status).toEqual({ twofaEnrolled: false, webauthnEnrolled: false, scratchTokenSet: false })
  })

  test('a user finishes enrollment with a current code → 200 JSON scratch token; status on', async () => {
    const { t, alice, scratch } = await totpUser()
    expect(scratch).toMatch(/^[a-z0-9]{10}$/)
    const status = await (await t.as(alice).get(`${BASE}/`)).json()
    expect(status).toEqual({ twofaEnrolled: true, webauthnEnrolled: false, scratchTokenSet: true })
  })

  test('the secret is not stored in the clear and never logged', async () => {
    const { t, secret, scratch } = await totpUser()
    const rows = await t.deps.db.read.query.twoFactors.findMany()
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(JSON.stringify(rows)).not.toContain(scratch)
    expect(t.logs.join('\n')).not.toContain(secret)
    expect(t.logs.join('\n')).not.toContain(scratch)
  })

  test('a wrong passcode → 422, nothing enrolled', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { secret } = await (await t.as(alice).get(`${BASE}/twofa/enroll`)).json()
    const right = await generate({ secret })
    const wrong = right === '000000' ? '111111' : '000000'
    const res = await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: wrong })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.wrongPasscode)
    expect((await (await t.as(alice).get(`${BASE}/`)).json()).twofaEnrolled).toBe(false)
  })

  test.each([[{}], [{ passcode: '12345' }], [{ passcode: 'abcdef' }]])('a malformed body %j → 422', async (body) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await t.as(alice).get(`${BASE}/twofa/enroll`)
    expect((await t.as(alice).send('POST', `${BASE}/twofa/enroll`, body)).status).toBe(422)
  })

  test('finishing without starting → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: '123456' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.noPendingEnrollment)
  })

  test('an enrolled user starts or finishes enrollment again → 422 already enrolled', async () => {
    const { t, alice, secret } = await totpUser()
    const again = await t.as(alice).get(`${BASE}/twofa/enroll`)
    expect(again.status).toBe(422)
    expect((await again.json()).message).toBe(Messages.alreadyEnrolled)
    const finish = await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: await nextCode(secret) })
    expect(finish.status).toBe(422)
  })

  test(`${MAX_FAILED_CODES} wrong enrollment codes → 429, even for the right code`, async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { secret } = await (await t.as(alice).get(`${BASE}/twofa/enroll`)).json()
    const right = await generate({ secret })
    const wrong = right === '000000' ? '111111' : '000000'
    for (let i = 0; i < MAX_FAILED_CODES; i++)
      expect((await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: wrong })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: right })).status).toBe(429)
  })

  test('regenerate scratch → a new JSON string token; not enrolled → 422', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { scratch } = await enrollTotp(t, alice)
    const res = await t.as(alice).send('POST', `${BASE}/twofa/regenerate_scratch`)
    expect(res.status).toBe(200)
    const fresh = await res.json()
    expect(fresh).toMatch(/^[a-z0-9]{10}$/)
    expect(fresh).not.toBe(scratch)
    const none = await t.as(bob).send('POST', `${BASE}/twofa/regenerate_scratch`)
    expect(none.status).toBe(422)
    expect((await none.json()).message).toBe(Messages.notEnrolled)
  })

  test('disable → 200 no body; Basic password works again without a code', async () => {
    const { t, alice } = await totpUser()
    expect((await basicOtp(t, 'alice')).status).toBe(401)
    const res = await t.as(alice).send('POST', `${BASE}/twofa/disable`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect((await (await t.as(alice).get(`${BASE}/`)).json()).twofaEnrolled).toBe(false)
    expect((await basicOtp(t, 'alice')).status).toBe(200)
  })
})

describe('the OTP header on Basic password sign-in', () => {
  test('an enrolled user without the header → 401 asking for it', async () => {
    const { t } = await totpUser()
    const res = await basicOtp(t, 'alice')
    expect(res.status).toBe(401)
    expect((await res.json()).message).toBe(Messages.otpMissing)
  })

  test.each(['X-Platform-OTP', 'X-Gitea-OTP'])('a current code in %s → 200', async (header) => {
    const { t, secret } = await totpUser()
    expect((await basicOtp(t, 'alice', await nextCode(secret), header)).status).toBe(200)
  })

  test('a wrong code → 401 invalid provided OTP', async () => {
    const { t, secret } = await totpUser()
    const right = await nextCode(secret)
    const res = await basicOtp(t, 'alice', right === '000000' ? '111111' : '000000')
    expect(res.status).toBe(401)
    expect((await res.json()).message).toBe(Messages.otpInvalid)
  })

  test('a code replayed after use → 401', async () => {
    const { t, secret } = await totpUser()
    const code = await nextCode(secret)
    expect((await basicOtp(t, 'alice', code)).status).toBe(200)
    expect((await basicOtp(t, 'alice', code)).status).toBe(401)
  })

  test('the code used to finish enrollment cannot be replayed → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { secret } = await (await t.as(alice).get(`${BASE}/twofa/enroll`)).json()
    const code = await generate({ secret })
    expect((await t.as(alice).send('POST', `${BASE}/twofa/enroll`, { passcode: code })).status).toBe(200)
    expect((await basicOtp(t, 'alice', code)).status).toBe(401)
  })

  test('two parallel requests with the same code → exactly one 200', async () => {
    const { t, secret } = await totpUser()
    const code = await nextCode(secret)
    const statuses = (await Promise.all(Array.from({ length: 4 }, () => basicOtp(t, 'alice', code)))).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 401, 401, 401])
  })

  test('the scratch token works once for recovery, then is gone', async () => {
    const { t, alice, scratch } = await totpUser()
    expect((await basicOtp(t, 'alice', scratch)).status).toBe(200)
    expect((await basicOtp(t, 'alice', scratch)).status).toBe(401)
    expect((await (await t.as(alice).get(`${BASE}/`)).json()).scratchTokenSet).toBe(false)
  })

  test(`${MAX_FAILED_CODES} wrong codes → locked: 429 with Retry-After, even for a right code`, async () => {
    const { t, secret } = await totpUser()
    const right = await nextCode(secret)
    const wrong = right === '000000' ? '111111' : '000000'
    for (let i = 0; i < MAX_FAILED_CODES; i++) expect((await basicOtp(t, 'alice', wrong)).status).toBe(401)
    const res = await basicOtp(t, 'alice', right)
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(LOCK_SECONDS - 5)
    expect((await res.json()).message).toBe(Messages.locked)
  })

  test('the lock lifts after LOCK_SECONDS: a right code then → 200', async () => {
    const { t, secret } = await totpUser()
    const wrong = (await nextCode(secret)) === '000000' ? '111111' : '000000'
    for (let i = 0; i < MAX_FAILED_CODES; i++) expect((await basicOtp(t, 'alice', wrong)).status).toBe(401)
    t.clock.advance((LOCK_SECONDS + 1) * 1000)
    // A code of the step after the app clock's current one (the server checks codes against that clock).
    const right = await generate({ secret, epoch: t.clock.seconds() + 30 })
    expect((await basicOtp(t, 'alice', right)).status).toBe(200)
  })

  test('a wrong password with a right code → 401 invalid credentials (the code is not consumed)', async () => {
    const { t, secret } = await totpUser()
    const code = await nextCode(secret)
    const res = await t.request('GET', '/api/v1/user', {
      headers: { authorization: basic('alice', 'wrong password'), 'X-Platform-OTP': code },
    })
    expect(res.status).toBe(401)
    expect((await res.json()).message).toBe(AuthMessages.invalidBasic)
    expect((await basicOtp(t, 'alice', code)).status).toBe(200)
  })

  test('token and session sign-ins of an enrolled user need no code → 200', async () => {
    const { t, alice } = await totpUser()
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic(alice.token, '') } })).status).toBe(200)
    const { secret: cookie } = await startSession(t.deps.db, alice.user, { ip: '', userAgent: '', remember: false }, t.clock.seconds())
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: `platform_session=${cookie}` } })).status).toBe(200)
  })
})

describe('access rules of the two-factor routes', () => {
  const ROUTES = [
    ['GET', `${BASE}/`],
    ['GET', `${BASE}/twofa/enroll`],
    ['POST', `${BASE}/twofa/enroll`],
    ['POST', `${BASE}/twofa/regenerate_scratch`],
    ['POST', `${BASE}/twofa/disable`],
  ]

  test.each(ROUTES)('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    expect((await t.request(method, path, { body: method === 'POST' ? { passcode: '123456' } : undefined })).status).toBe(401)
  })

  test.each(ROUTES)('a token without user scope on %s %s → 403', async (method, path) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await (await import('../../src/identity/tokens/service')).mintToken(t.deps.db, alice.user.id, {
      name: 'org',
      scopes: ['write:organization'],
    })
    const res = await t.request(method, path, { token: plaintext, body: method === 'POST' ? { passcode: '123456' } : undefined })
    expect(res.status).toBe(403)
  })
})
