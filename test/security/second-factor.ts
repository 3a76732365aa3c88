import { expect } from 'bun:test'
import { generate } from 'otplib'
import { Messages } from '../../src/identity/signin/service'
import { makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { softRegistration } from './soft-authenticator'

/** Second-factor sign-in steps over the API, shared by the sign-in tests and the audit tests. */

const SECURITY = '/api/v1/user/settings/security'
export const ORIGIN = 'https://platform.example.com'

/** Enrolls `who` in TOTP over HTTP; returns the secret and the scratch token. */
export async function enrollTotp(t: TestApp, who: TestUser): Promise<{ secret: string; scratch: string }> {
  const start = await t.as(who).get(`${SECURITY}/twofa/enroll`)
  expect(start.status).toBe(200)
  const { secret } = await start.json()
  const res = await t.as(who).send('POST', `${SECURITY}/twofa/enroll`, { passcode: await generate({ secret }) })
  expect(res.status).toBe(200)
  return { secret, scratch: await res.json() }
}

/** A fresh app whose user alice enrolled in TOTP. */
export async function totpUser() {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  return { t, alice: alice!, ...(await enrollTotp(t, alice!)) }
}

export async function registerSoftKey(t: TestApp, who: TestUser): Promise<void> {
  const { publicKey } = await (await t.as(who).send('POST', `${SECURITY}/webauthn/request_register`, { name: 'key' })).json()
  expect(
    (await t.as(who).send('POST', `${SECURITY}/webauthn/register`, await softRegistration(publicKey, { origin: ORIGIN }))).status,
  ).toBe(201)
}

export const cookieValue = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((pair) => pair.startsWith(`${name}=`))
    ?.slice(name.length + 1)

/** Password step: expects 405 and returns the ticket cookie's value. */
export async function passwordStep(t: TestApp, name: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/user/signin', { body: { username: name, password: PASSWORD } })
  expect(res.status).toBe(405)
  expect((await res.json()).message).toBe(Messages.twoFactor)
  expect(cookieValue(res, 'platform_session')).toBeUndefined()
  const ticket = cookieValue(res, 'platform_signin_ticket')
  expect(ticket).toMatch(/^[\w-]{43}$/)
  return ticket!
}

export const codeStep = (t: TestApp, ticket: string | undefined, passcode: string) =>
  t.request('POST', '/api/v1/user/signin/two-factor', {
    body: { passcode },
    headers: ticket ? { cookie: `platform_signin_ticket=${ticket}` } : {},
  })
