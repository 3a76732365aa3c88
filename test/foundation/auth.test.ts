import { describe, expect, test } from 'bun:test'
import { ANONYMOUS_PERMISSIONS } from '../../src/authz/authorize'
import { DOCS_PATH, SPEC_PATH } from '../../src/http/openapi'
import { Messages } from '../../src/identity/authenticate'
import { startSession } from '../../src/identity/sessions/service'
import { mintToken } from '../../src/identity/tokens/service'
import { basic, makeTestApp, PASSWORD } from '../support/app'
import { permissionOf } from '../support/routes'

describe('token authentication', () => {
  test('Authorization: token <t> → GET /user answers that user', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.request('GET', '/api/v1/user', { headers: { authorization: `token ${alice.token}` } })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id: alice.user.id, login: 'alice', username: 'alice', email: 'alice@example.com' })
  })

  test.each(['bearer', 'Bearer', 'TOKEN'])('scheme "%s" is accepted case-insensitively → 200', async (scheme) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.request('GET', '/api/v1/user', { headers: { authorization: `${scheme} ${alice.token}` } })
    expect(res.status).toBe(200)
  })

  test.each(['token', 'access_token'])('query parameter %s authenticates → 200', async (param) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.request('GET', `/api/v1/user?${param}=${alice.token}`)
    expect(res.status).toBe(200)
    expect((await res.json()).login).toBe('alice')
  })

  test('an invalid token on a public route → 401, not an anonymous answer', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/healthz', { headers: { authorization: 'token 0000000000000000000000000000000000000000' } })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ message: Messages.invalidToken })
  })

  test('an expired token → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'old', scopes: ['all'], expiresAt: t.clock.seconds() - 1 })
    expect((await t.request('GET', '/api/v1/user', { token: plaintext })).status).toBe(401)
  })

  test('a token whose last eight characters match but whose body differs → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const forged = `${'f'.repeat(32)}${alice.token.slice(-8)}`
    expect((await t.request('GET', '/api/v1/user', { token: forged })).status).toBe(401)
  })

  test('a token of a user whose sign-in was prohibited → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write(async (tx) => (await import('../../src/identity/store')).updateUser(tx, alice.user.id, { prohibitLogin: true }))
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(401)
  })

  test('a read:user token on a write:admin route → 403 naming the scope', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const { plaintext } = await mintToken(t.deps.db, admin.user.id, { name: 'ro', scopes: ['read:user'] })
    expect((await t.request('GET', '/api/v1/user', { token: plaintext })).status).toBe(200)
    const res = await t.request('POST', '/api/v1/admin/users', {
      token: plaintext,
      body: { username: 'bob', email: 'bob@example.com', password: 'password123' },
    })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toContain('write:admin')
  })

  test('a write:user token may read user routes (write implies read) → 200', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'rw', scopes: ['write:user'] })
    expect((await t.request('GET', '/api/v1/user', { token: plaintext })).status).toBe(200)
  })
})

describe('Basic authentication', () => {
  test('username and password → 200', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', PASSWORD) } })).status).toBe(200)
  })

  test('email and password → 200', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice@example.com', PASSWORD) } })).status).toBe(200)
  })

  test('a wrong password → 401', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', 'wrong password') } })).status).toBe(401)
  })

  test('an unknown user → 401 with the same message as a wrong password', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const unknown = await t.request('GET', '/api/v1/user', { headers: { authorization: basic('nobody', PASSWORD) } })
    const wrong = await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', 'nope-nope') } })
    expect(unknown.status).toBe(401)
    expect(await unknown.json()).toEqual(await wrong.json())
  })

  test('a token as the username with an empty password → 200', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.request('GET', '/api/v1/user', { headers: { authorization: basic(alice.token, '') } })
    expect(res.status).toBe(200)
    expect((await res.json()).login).toBe('alice')
  })

  test("a token in the password slot of its owner → 200; of someone else's name → 401", async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice', 'bob')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', alice.token) } })).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('bob', alice.token) } })).status).toBe(401)
  })
})

describe('session cookie', () => {
  async function signedIn() {
    const t = await makeTestApp()
    const admin = await t.admin()
    const s = await startSession(t.deps.db, admin.user, { ip: '127.0.0.1', userAgent: 'test', remember: false }, t.clock.seconds())
    const cookie = `platform_session=${s.secret}; _csrf=${s.csrfToken}`
    return { t, s, cookie }
  }

  test('a valid session cookie on GET → 200 without a CSRF header', async () => {
    const { t, cookie } = await signedIn()
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie } })).status).toBe(200)
  })

  test('a cookie-authenticated POST without X-Csrf-Token → 403 and nothing created', async () => {
    const { t, cookie } = await signedIn()
    const res = await t.request('POST', '/api/v1/admin/users', {
      headers: { cookie },
      body: { username: 'bob', email: 'b@example.com', password: 'password123' },
    })
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ message: Messages.csrf })
    const admin = await t.admin()
    expect(
      (
        await t.request('POST', '/api/v1/admin/users', {
          token: admin.token,
          body: { username: 'bob', email: 'b@example.com', password: 'password123' },
        })
      ).status,
    ).toBe(201)
  })

  test('a cookie-authenticated POST with a mismatched X-Csrf-Token → 403', async () => {
    const { t, cookie } = await signedIn()
    const res = await t.request('POST', '/api/v1/admin/users', {
      headers: { cookie, 'x-csrf-token': 'guess' },
      body: { username: 'bob', email: 'b@example.com', password: 'password123' },
    })
    expect(res.status).toBe(403)
  })

  test('a cookie-authenticated POST with the matching X-Csrf-Token → 201', async () => {
    const { t, s, cookie } = await signedIn()
    const res = await t.request('POST', '/api/v1/admin/users', {
      headers: { cookie, 'x-csrf-token': s.csrfToken },
      body: { username: 'bob', email: 'b@example.com', password: 'password123' },
    })
    expect(res.status).toBe(201)
  })

  test('an unknown session cookie → 401 even on a public route', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/healthz', { headers: { cookie: 'platform_session=forged' } })).status).toBe(401)
  })
})

describe('sudo', () => {
  test('a site admin with ?sudo=alice acts as alice', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    await t.users('alice')
    const res = await t.as(admin).get('/api/v1/user?sudo=alice')
    expect(res.status).toBe(200)
    expect((await res.json()).login).toBe('alice')
  })

  test('the Sudo header works too, and the query wins over it', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    await t.users('alice', 'bob')
    expect((await (await t.as(admin).get('/api/v1/user', { sudo: 'bob' })).json()).login).toBe('bob')
    expect((await (await t.as(admin).get('/api/v1/user?sudo=alice', { sudo: 'bob' })).json()).login).toBe('alice')
  })

  test('a non-admin with sudo → 403 "Only administrators allowed to sudo."', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice', 'bob')
    const res = await t.as(alice).get('/api/v1/user?sudo=bob')
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ message: 'Only administrators allowed to sudo.' })
  })

  test('an anonymous caller with sudo on a public route → 403', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    expect((await t.request('GET', '/healthz?sudo=alice')).status).toBe(403)
  })

  test('a site admin with sudo of an unknown user → 404', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    expect((await t.as(admin).get('/api/v1/user?sudo=ghost-user')).status).toBe(404)
  })

  test('while impersonating, site-admin routes see a non-admin → 403', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    await t.users('alice')
    const res = await t
      .as(admin)
      .send('POST', '/api/v1/admin/users?sudo=alice', { username: 'bob', email: 'b@example.com', password: 'password123' })
    expect(res.status).toBe(403)
  })
})

describe('anonymous callers', () => {
  test('every route declares its permission, in every deployment mode; only the API documentation stands outside the guard', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted,billing,marketplace' })
    const documentation = new Set([SPEC_PATH, DOCS_PATH, `${DOCS_PATH}/assets/:file`])
    const undeclared = t.app.routes
      .filter((r) => permissionOf(r) === undefined && !documentation.has(r.path))
      .map((r) => `${r.method} ${r.path}`)
    expect(undeclared).toEqual([])
  })

  test('every non-public route, in every deployment mode, answers 401 to a caller without credentials', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted,billing,marketplace' })
    const guarded = t.app.routes.filter((r) => {
      const p = permissionOf(r)
      return p !== undefined && !(ANONYMOUS_PERMISSIONS as readonly string[]).includes(p)
    })
    expect(guarded.length).toBeGreaterThan(1)
    for (const route of guarded) {
      const path = route.path.replace(/:(\w+)/g, 'x1')
      const res = await t.request(route.method, path, route.method === 'GET' ? {} : { body: {} })
      expect({ route: `${route.method} ${route.path}`, status: res.status }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 401,
      })
    }
  })
})
