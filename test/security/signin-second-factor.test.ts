import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { Messages as TwoFactorMessages } from '../../src/identity/security/two-factor/service'
import { Messages } from '../../src/identity/signin/service'
import { MAX_TICKET_FAILURES } from '../../src/identity/signin/tickets'
import { basic, makeTestApp, PASSWORD } from '../support/app'
import { nextCode } from '../support/totp'
import { codeStep, cookieValue, enrollTotp, ORIGIN, passwordStep, registerSoftKey, totpUser } from './second-factor'

describe('second sign-in step with TOTP', () => {
  test('password → 405 with a ticket; a current code with the ticket → 200, a working session, the ticket cleared', async () => {
    const { t, secret } = await totpUser()
    const res = await codeStep(t, await passwordStep(t, 'alice'), await nextCode(secret))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(cookieValue(res, 'platform_signin_ticket')).toBe('')
    const session = cookieValue(res, 'platform_session')
    const me = await t.request('GET', '/api/v1/user', { headers: { cookie: `platform_session=${session}` } })
    expect((await me.json()).login).toBe('alice')
  })

  test('a wrong code → 401 and no session; the ticket still finishes with a right code', async () => {
    const { t, secret } = await totpUser()
    const ticket = await passwordStep(t, 'alice')
    const right = await nextCode(secret)
    const wrong = await codeStep(t, ticket, right === '000000' ? '111111' : '000000')
    expect(wrong.status).toBe(401)
    expect((await wrong.json()).message).toBe(TwoFactorMessages.otpInvalid)
    expect(cookieValue(wrong, 'platform_session')).toBeUndefined()
    expect((await codeStep(t, ticket, right)).status).toBe(200)
  })

  test('no ticket, a made-up ticket, or a ticket already used → 401', async () => {
    const { t, secret } = await totpUser()
    expect((await (await codeStep(t, undefined, '123456')).json()).message).toBe(Messages.noTicket)
    expect((await codeStep(t, 'A'.repeat(43), '123456')).status).toBe(401)
    const ticket = await passwordStep(t, 'alice')
    expect((await codeStep(t, ticket, await nextCode(secret))).status).toBe(200)
    const replay = await codeStep(t, ticket, await generate({ secret }))
    expect(replay.status).toBe(401)
    expect((await replay.json()).message).toBe(Messages.noTicket)
  })

  test('the scratch token finishes sign-in once', async () => {
    const { t, scratch } = await totpUser()
    expect((await codeStep(t, await passwordStep(t, 'alice'), scratch)).status).toBe(200)
    expect((await codeStep(t, await passwordStep(t, 'alice'), scratch)).status).toBe(401)
  })

  test(`${MAX_TICKET_FAILURES} wrong codes end the ticket (or lock the factor): a right code then → no session`, async () => {
    const { t, secret } = await totpUser()
    const ticket = await passwordStep(t, 'alice')
    const right = await nextCode(secret)
    for (let i = 0; i < MAX_TICKET_FAILURES; i++) await codeStep(t, ticket, right === '000000' ? '111111' : '000000')
    const res = await codeStep(t, ticket, right)
    expect([401, 429]).toContain(res.status)
    expect(cookieValue(res, 'platform_session')).toBeUndefined()
  })

  test('a ticket is no password: the TOTP step for a key-only account → 400', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    await registerSoftKey(t, alice)
    const res = await codeStep(t, await passwordStep(t, 'alice'), '123456')
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.noTotp)
  })
})

describe('a security key counts as a second factor', () => {
  test('a user with only a security key: the password alone → 405 and no session', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    await registerSoftKey(t, alice)
    await passwordStep(t, 'alice')
  })

  test('Basic password auth of a key-only user → 401 saying to use a token; the token works', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    await registerSoftKey(t, alice)
    const res = await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', PASSWORD) } })
    expect(res.status).toBe(401)
    expect((await res.json()).message).toBe(TwoFactorMessages.securityKeyBasic)
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(200)
  })

  test('the key step without asking for options first → 400; options for a TOTP-only account → 400', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice, bob] = await t.users('alice', 'bob')
    await registerSoftKey(t, alice)
    await enrollTotp(t, bob)
    const assertion = {
      id: 'x',
      rawId: 'x',
      type: 'public-key',
      response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' },
    }
    const early = await t.request('POST', '/api/v1/user/signin/webauthn', {
      body: assertion,
      headers: { cookie: `platform_signin_ticket=${await passwordStep(t, 'alice')}` },
    })
    expect(early.status).toBe(400)
    expect((await early.json()).message).toBe(Messages.noChallenge)
    const options = await t.request('POST', '/api/v1/user/signin/webauthn/options', {
      headers: { cookie: `platform_signin_ticket=${await passwordStep(t, 'bob')}` },
    })
    expect(options.status).toBe(400)
    expect((await options.json()).message).toBe(Messages.noSecurityKey)
  })

  test('a forged assertion after real options → 401 and no session', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    await registerSoftKey(t, alice)
    const cookie = `platform_signin_ticket=${await passwordStep(t, 'alice')}`
    const options = await t.request('POST', '/api/v1/user/signin/webauthn/options', { headers: { cookie } })
    const { publicKey } = await options.json()
    const id = publicKey.allowCredentials[0].id
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: publicKey.challenge, origin: ORIGIN })).toString(
      'base64url',
    )
    const forged = {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData,
        authenticatorData: Buffer.alloc(37).toString('base64url'),
        signature: Buffer.alloc(64).toString('base64url'),
      },
    }
    const res = await t.request('POST', '/api/v1/user/signin/webauthn', { body: forged, headers: { cookie } })
    expect(res.status).toBe(401)
    expect(cookieValue(res, 'platform_session')).toBeUndefined()
  })
})
