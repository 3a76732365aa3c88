import { describe, expect, test } from 'bun:test'
import { makeHttpTestApp } from '../identity/http'
import { codeStep, enrollTotp, passwordStep } from '../security/second-factor'
import { makeTestApp, PASSWORD, type TestApp } from '../support/app'
import { nextCode } from '../support/totp'
import { auditAt, eventOf, storedEvents } from './support'

const signIn = (t: TestApp, username: string, password: string, requestId: string, headers: Record<string, string> = {}) =>
  t.request('POST', '/api/v1/user/signin', { body: { username, password }, headers: { 'x-request-id': requestId, ...headers } })

describe('sign-ins', () => {
  test('a password sign-in over HTTP → a signin event: method password, the user as actor, the client address', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await signIn(t, 'alice', PASSWORD, 'in-1')).status).toBe(200)
    expect(await eventOf(t, 'in-1')).toMatchObject({
      kind: 'signin',
      method: 'password',
      actor: { id: alice!.user.id, login: 'alice' },
      credential: { kind: 'none' },
      target: { login: 'alice' },
      sourceAddress: '127.0.0.1',
      outcome: { status: 200, result: 'allowed' },
    })
    expect((await auditAt(t, alice!, '/api/v1/user/audit')).map((e) => e.requestId)).toContain('in-1')
  })

  test('a wrong password → refused, no actor, the login tried; the account owner sees it in their own trail, nobody else', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    expect((await signIn(t, 'alice', 'not the password', 'wrong-1')).status).toBe(422)
    expect(await eventOf(t, 'wrong-1')).toMatchObject({
      kind: 'signin',
      method: 'password',
      actor: null,
      target: { login: 'alice' },
      outcome: { status: 422, result: 'refused' },
    })
    expect((await auditAt(t, alice!, '/api/v1/user/audit')).map((e) => e.requestId)).toEqual(['wrong-1'])
    expect(await auditAt(t, bob!, '/api/v1/user/audit')).toEqual([])
    expect(await storedEvents(t)).not.toContain('not the password')
  })

  test('an unknown login → refused 404 with the login tried', async () => {
    const t = await makeTestApp()
    expect((await signIn(t, 'nobody', 'whatever-1', 'unknown-1')).status).toBe(404)
    expect(await eventOf(t, 'unknown-1')).toMatchObject({
      kind: 'signin',
      actor: null,
      target: { login: 'nobody' },
      outcome: { status: 404 },
    })
  })

  test('behind a trusted proxy → the source address is the client X-Forwarded-For names', async () => {
    const t = await makeHttpTestApp({ PLATFORM_TRUSTED_PROXIES: '127.0.0.1/32' })
    await t.users('alice')
    await signIn(t, 'alice', PASSWORD, 'fwd-1', { 'x-forwarded-for': '203.0.113.9' })
    expect((await eventOf(t, 'fwd-1')).sourceAddress).toBe('203.0.113.9')
  })

  test('with TOTP: the password step is refused (405, second factor needed), a wrong code refused, the right code allowed', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { secret } = await enrollTotp(t, alice!)
    const ticket = await passwordStep(t, 'alice')
    const right = await nextCode(secret)
    const wrong = right === '000000' ? '111111' : '000000'
    expect((await codeStep(t, ticket, wrong)).status).toBe(401)
    expect((await codeStep(t, ticket, right)).status).toBe(200)
    const signins = (await auditAt(t, alice!, '/api/v1/user/audit?kind=signin')).map((e) => [
      e.method,
      e.outcome.status,
      e.actor?.login ?? null,
    ])
    expect(signins).toEqual([
      ['totp', 200, 'alice'],
      ['totp', 401, null],
      ['password', 405, null],
    ])
  })
})
