import { describe, expect, test } from 'bun:test'
import { isSecretQueryName } from '../../src/http/request-log'
import { makeTestApp } from '../support/app'

const validUser = { username: 'bob', email: 'bob@example.com', password: 'password123' }

describe('the error model', () => {
  test('an unknown route → 404 JSON with message and docs url', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/api/v1/no/such/route')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(await res.json()).toEqual({ message: 'Not Found', url: `${t.config.publicUrl}/api/v1/swagger` })
  })

  test('a route registered with a trailing slash does not answer without it (strict paths) → 404', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/healthz/')).status).toBe(404)
  })

  test('over a real socket a path with a trailing slash and the same path without it are different routes', async () => {
    const t = await makeTestApp({ PLATFORM_RUN_MODE: 'dev' })
    const admin = await t.admin()
    const base = await t.listen()
    const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `token ${admin.token}` } })
    expect((await get('/api/v1/user/settings/security/')).status).toBe(200)
    expect((await get('/api/v1/user/settings/security')).status).toBe(404)
    // `GET /orgs/claim/` (dev mode) must not swallow the organization named "claim".
    expect((await get('/api/v1/orgs/claim/')).status).toBe(200)
    expect(await (await get('/api/v1/orgs/claim')).json()).toMatchObject({ message: 'organization does not exist' })
  })

  test('a malformed JSON body → 422 and nothing is created', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.request('POST', '/api/v1/admin/users', {
      token: admin.token,
      body: '{"username": "bob",',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toMatch(/not valid JSON/)
    expect((await t.request('GET', '/api/v1/user?sudo=bob', { token: admin.token })).status).toBe(404)
  })

  test('a missing required field → 422 with a field error naming it', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', { username: 'bob', password: 'password123' })
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.message).toBe('Validation Failed')
    expect(body.errors.map((e: { field: string }) => e.field)).toContain('email')
    expect(JSON.stringify(body)).not.toContain('schema')
  })

  test('a value outside an enumeration → 422 naming the values that would do', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', { ...validUser, visibility: 'secret' })
    expect(res.status).toBe(422)
    expect((await res.json()).errors).toContainEqual({ field: 'visibility', message: 'must be one of: public, limited, private' })
  })

  test('a duplicate name → 422 (never 409), case-insensitively', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    expect((await t.as(admin).send('POST', '/api/v1/admin/users', validUser)).status).toBe(201)
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', { ...validUser, username: 'BOB' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe('user already exists')
  })

  test('an invalid or reserved name → 422 with the reason', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const invalid = await t.as(admin).send('POST', '/api/v1/admin/users', { ...validUser, username: '-bob' })
    expect(invalid.status).toBe(422)
    const reserved = await t.as(admin).send('POST', '/api/v1/admin/users', { ...validUser, username: 'explore' })
    expect(reserved.status).toBe(422)
    expect((await reserved.json()).message).toBe('name is reserved')
  })

  test('a 100k-deep JSON body over real HTTP → 4xx, and the server keeps serving', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const base = await t.listen()
    const res = await fetch(`${base}/api/v1/admin/users`, {
      method: 'POST',
      headers: { authorization: `token ${admin.token}`, 'content-type': 'application/json' },
      body: '['.repeat(100_000),
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect((await res.json()).message).toMatch(/nesting deeper/)
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
  })

  test('a body over the configured limit → 413', async () => {
    const t = await makeTestApp({ PLATFORM_MAX_BODY_BYTES: '1024' })
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', { ...validUser, full_name: 'x'.repeat(4096) })
    expect(res.status).toBe(413)
  })

  test('an unexpected failure → bare 500 without a stack trace; the log carries the request id', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    await t.deps.db.close() // the database going away mid-flight is not the client's fault
    const res = await t.request('GET', '/api/v1/user', { token: admin.token, headers: { 'x-request-id': 'trace-me-1' } })
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text).message).toBe('Internal Server Error')
    expect(text).not.toMatch(/at |\.ts|SQLITE/)
    expect(res.headers.get('x-request-id')).toBe('trace-me-1')
    expect(t.logs.some((line) => line.includes('unexpected error') && line.includes('trace-me-1'))).toBe(true)
  })
})

describe('request log', () => {
  test('one JSON line per request with method, path, status, duration and id; query secrets redacted', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.request('GET', `/api/v1/user?token=${admin.token}&x=1`)
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')
    expect(id).toBeTruthy()
    const line = (await t.logFor(id)).find((l) => l.event === 'request' && l.requestId === id)
    expect(line).toMatchObject({ method: 'GET', status: 200, path: '/api/v1/user?token=%5Bredacted%5D&x=1' })
    expect(typeof line?.durationMs).toBe('number')
    expect(t.logs.join('\n')).not.toContain(admin.token)
  })

  test('a secret given as a name=value pair in the path (;token=…) is redacted by the same rule; plain pairs are kept', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const paths = [
      `/api/v1/user;token=${admin.token}`,
      `/api/v1/user;page=2;ACCESS_TOKEN=${admin.token}`,
      `/api/v1/user;%74oken%3D${admin.token}`,
    ]
    const logged: string[] = []
    for (const path of paths) {
      const id = (await t.request('GET', path)).headers.get('x-request-id')
      logged.push(String((await t.logFor(id)).find((l) => l.event === 'request' && l.requestId === id)?.path))
    }
    expect(logged).toEqual([
      '/api/v1/user;token=[redacted]',
      '/api/v1/user;page=2;ACCESS_TOKEN=[redacted]',
      '/api/v1/user;%74oken%3D[redacted]',
    ])
    expect(t.logs.join('\n')).not.toContain(admin.token)
  })

  test('a query value whose name reads like a secret is redacted whatever its spelling; plain parameters are kept', async () => {
    const t = await makeTestApp()
    const secrets = [
      'passwd',
      'private_token',
      'csrf',
      'session',
      'X-Amz-Signature',
      'X-Amz-Credential',
      'api_key',
      'apiKey',
      'Authorization',
      'sig',
      'jwt',
    ]
    const plain = ['page', 'limit', 'labelSelector', 'fieldSelector', 'watch', 'resourceVersion', 'x']
    const query = [...secrets, ...plain].map((name, i) => `${name}=value${i}`).join('&')
    const res = await t.request('GET', `/api/v1/version?${query}`)
    const id = res.headers.get('x-request-id')
    const path = String((await t.logFor(id)).find((l) => l.event === 'request' && l.requestId === id)?.path)
    const logged = new URLSearchParams(path.slice(path.indexOf('?') + 1))
    for (const name of secrets) expect(`${name}=${logged.get(name)}`).toBe(`${name}=[redacted]`)
    for (const [i, name] of plain.entries()) expect(logged.get(name)).toBe(`value${secrets.length + i}`)
  })

  test('the redaction rule: any name holding token, pass, secret, key, session, csrf, auth, signature, credential, ...', () => {
    for (const name of [
      'token',
      'access_token',
      'refresh_token',
      'password',
      'passphrase',
      'client_secret',
      'sessionid',
      'xsrf-token',
      'oauth_verifier',
      'Signature',
      'code',
      'state',
      'sudo',
      'code_verifier',
    ])
      expect(`${name}: ${isSecretQueryName(name)}`).toBe(`${name}: true`)
    for (const name of ['page', 'limit', 'continue', 'dryRun', 'container', 'follow', 'tailLines', 'org', 'period_start', 'view_type'])
      expect(`${name}: ${isSecretQueryName(name)}`).toBe(`${name}: false`)
  })

  test('error statuses are logged as sent', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/nowhere')
    const id = res.headers.get('x-request-id')
    const line = (await t.logFor(id)).find((l) => l.requestId === id)
    expect(line?.status).toBe(404)
  })
})
