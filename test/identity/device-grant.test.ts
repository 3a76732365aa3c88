import { describe, expect, test } from 'bun:test'
import type { DeviceAuthorization } from '../../src/identity/oauth2/device'
import { asBasic, makeTestApp, type TestApp } from '../support/app'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A form POST, as RFC 8628 clients send it. */
const form = (t: TestApp, path: string, fields: Record<string, string>) =>
  t.request('POST', path, {
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })

async function start(t: TestApp, fields: Record<string, string> = { client_id: 'platform-cli' }) {
  const res = await form(t, '/login/oauth/device_authorization', fields)
  expect(res.status).toBe(200)
  return (await res.json()) as DeviceAuthorization
}

const pollOnce = async (t: TestApp, deviceCode: string, clientId = 'platform-cli') => {
  const res = await form(t, '/login/oauth/access_token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** Polls after waiting the interval (on the test clock), as a well-behaved client does. */
async function poll(t: TestApp, deviceCode: string, clientId = 'platform-cli') {
  t.clock.advance(5_000)
  return pollOnce(t, deviceCode, clientId)
}

const answer = (t: TestApp, user: string, userCode: string, approve: boolean) =>
  asBasic(t, user, 'POST', '/api/v1/user/device', { user_code: userCode, approve })

describe('the device authorization grant (RFC 8628)', () => {
  test('platform-cli: codes and URLs, pending until approved, then an access token of the approver, once', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const started = await start(t)
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(started.verification_uri).toBe(`${t.config.publicUrl}/login/device`)
    expect(started.verification_uri_complete).toBe(`${t.config.publicUrl}/login/device?user_code=${started.user_code}`)
    expect(started).toMatchObject({ expires_in: 600, interval: 5 })
    expect(await poll(t, started.device_code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } })
    const described = await asBasic(t, 'alice', 'GET', `/api/v1/user/device?user_code=${started.user_code.toLowerCase()}`)
    expect(await described.json()).toEqual({ user_code: started.user_code, client: 'platform-api command line', scopes: ['all'] })
    // Typed in lower case without the dash: the same code.
    const approved = await answer(t, 'alice', started.user_code.replace('-', '').toLowerCase(), true)
    expect(approved.status).toBe(200)
    expect(await approved.json()).toMatchObject({ approved: true, client: 'platform-api command line' })
    const issued = await poll(t, started.device_code)
    expect(issued.status).toBe(200)
    expect(issued.body).toMatchObject({ token_type: 'bearer', scope: 'all' })
    const me = await t.request('GET', '/api/v1/user', { headers: { authorization: `Bearer ${issued.body.access_token}` } })
    expect(((await me.json()) as { login: string }).login).toBe('alice')
    expect(await poll(t, started.device_code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect((await answer(t, 'alice', started.user_code, true)).status).toBe(409)
  })

  test('denied → access_denied; a second answer is refused (one answer per code)', async () => {
    const t = await makeTestApp()
    await t.users('alice', 'bob')
    const started = await start(t)
    expect((await answer(t, 'alice', started.user_code, false)).status).toBe(200)
    expect((await answer(t, 'bob', started.user_code, true)).status).toBe(409)
    expect(await poll(t, started.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } })
  })

  test('polling faster than the interval → slow_down, and the interval grows by 5 s', async () => {
    const t = await makeTestApp()
    const started = await start(t)
    expect((await poll(t, started.device_code)).body.error).toBe('authorization_pending')
    t.clock.advance(1_000)
    expect((await pollOnce(t, started.device_code)).body.error).toBe('slow_down')
    // 5 s is no longer enough: the interval was 10 s, and is 15 s after this second slow_down.
    expect((await poll(t, started.device_code)).body.error).toBe('slow_down')
    t.clock.advance(15_000)
    expect((await pollOnce(t, started.device_code)).body.error).toBe('authorization_pending')
  })

  test('a code past its 10 minutes → expired_token, and it can no longer be approved', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const started = await start(t)
    t.clock.advance(601_000)
    expect(await pollOnce(t, started.device_code)).toMatchObject({ status: 400, body: { error: 'expired_token' } })
    expect((await answer(t, 'alice', started.user_code, true)).status).toBe(404)
  })

  test('unknown client, bad scope, unknown device code, another client’s code: the RFC 6749 errors', async () => {
    const t = await makeTestApp()
    const unknown = await form(t, '/login/oauth/device_authorization', { client_id: 'nobody' })
    expect(unknown.status).toBe(401)
    expect(await unknown.json()).toMatchObject({ error: 'invalid_client' })
    const scope = await form(t, '/login/oauth/device_authorization', { client_id: 'platform-cli', scope: 'root' })
    expect(await scope.json()).toMatchObject({ error: 'invalid_scope' })
    expect(await pollOnce(t, 'pod_nothing')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const missing = await form(t, '/login/oauth/access_token', { grant_type: DEVICE_GRANT, client_id: 'platform-cli' })
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' })
  })

  test('a registered application gets an OAuth2 grant with the scopes asked; a token cannot approve', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const created = await asBasic(t, 'alice', 'POST', '/api/v1/user/settings/applications/oauth2', {
      name: 'tv app',
      redirect_uris: ['https://tv.example/cb'],
      confidential_client: false,
    })
    const app = (await created.json()) as { client_id: string }
    const started = await start(t, { client_id: app.client_id, scope: 'read:user' })
    const byToken = await t.as(alice!).send('POST', '/api/v1/user/device', { user_code: started.user_code, approve: true })
    expect(byToken.status).toBe(403)
    expect(await (await asBasic(t, 'alice', 'GET', `/api/v1/user/device?user_code=${started.user_code}`)).json()).toMatchObject({
      client: 'tv app',
      scopes: ['read:user'],
    })
    expect((await answer(t, 'alice', started.user_code, true)).status).toBe(200)
    expect((await poll(t, started.device_code)).body.error).toBe('invalid_grant')
    const issued = await poll(t, started.device_code, app.client_id)
    expect(issued.status).toBe(200)
    expect(issued.body).toMatchObject({ token_type: 'bearer', scope: 'read:user', expires_in: 3600 })
    expect(String(issued.body.access_token)).toStartWith('poa_')
  })

  test('a user code that cannot be one → 422 naming user_code', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const res = await answer(t, 'alice', 'AAAA-1111', true)
    expect(res.status).toBe(422)
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('user_code')
  })
})
