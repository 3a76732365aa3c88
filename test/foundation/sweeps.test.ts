import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { startSession } from '../../src/identity/sessions/service'
import { deadRegistrationFixture } from '../clusters/support'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'

/** Cross-cutting table tests over `app.routes`: ids, bodies and secrets, for every route at once. */

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])
const JUNK_IDS = ['9007199254740993', '99999999999999999999', '-1', '0', '1e3', '0x10', 'abc', '1.5', '%20']

type Route = TestApp['app']['routes'][number]

/** The route's path with every `:param` filled: user names with `username`, anything else with `id`. */
const fill = (route: Route, username: string, id: string) =>
  route.path.replace(/:(\w+)/g, (_, name: string) => (name === 'username' || name === 'target' || name === 'name' ? username : id))

/** Basic-password routes (`password: true`) take Basic; every other route takes the user's token. */
const credentialFor = (route: Route, who: TestUser): Record<string, string> =>
  (route.hooks.detail as Record<string, unknown> | undefined)?.['x-credential'] === 'password'
    ? { authorization: basic(who.name, PASSWORD) }
    : { authorization: `token ${who.token}` }

describe('junk ids', () => {
  test('a signed-in user sends junk ids to every route with an id param → 4xx, never 5xx or 2xx', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const outcomes: string[] = []
    for (const route of t.app.routes.filter((r) => /:(?!username|target|name\b)\w+/.test(r.path))) {
      for (const junk of JUNK_IDS) {
        const res = await t.request(route.method, fill(route, 'alice', junk), {
          headers: { ...credentialFor(route, alice), 'content-type': 'application/json' },
          body: BODY_METHODS.has(route.method) ? '{}' : undefined,
        })
        if (res.status < 400 || res.status >= 500) outcomes.push(`${route.method} ${route.path} ${junk} → ${res.status}`)
      }
    }
    expect(outcomes).toEqual([])
  })

  test('a signed-in user sends junk ids in id query parameters → 4xx, never 5xx', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const outcomes: string[] = []
    for (const junk of JUNK_IDS) {
      for (const [method, path] of [
        ['POST', `/api/v1/user/settings/account/email?_method=PRIMARY&id=${junk}`],
        ['POST', `/api/v1/user/settings/account/email/delete?id=${junk}`],
      ] as const) {
        const res = await t.as(alice).send(method, path)
        if (res.status < 400 || res.status >= 500) outcomes.push(`${method} ${path} → ${res.status}`)
      }
      const ids = await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/delete-records', `{"ids":[${junk}]}`, {
        'content-type': 'application/json',
      })
      if (ids.status >= 500) outcomes.push(`delete-records ${junk} → ${ids.status}`)
      const search = await t.request('GET', `/api/v1/users/search?uid=${junk}`)
      if (search.status >= 500) outcomes.push(`search uid=${junk} → ${search.status}`)
    }
    expect(outcomes).toEqual([])
  })
})

describe('bad bodies', () => {
  const bodyRoutes = (t: TestApp) => t.app.routes.filter((r) => BODY_METHODS.has(r.method))

  for (const [name, contentType, body] of [
    ['malformed JSON', 'application/json', '{"name": '],
    ['a 100k-deep JSON array', 'application/json', '['.repeat(100_000)],
    ['a JSON body with an XML content type', 'application/xml', '<a/>'],
  ] as const) {
    test(`a signed-in user sends ${name} to every POST/PUT/PATCH route → 4xx JSON error, never 5xx or 2xx`, async () => {
      const t = await makeTestApp()
      const [alice] = await t.users('alice')
      const outcomes: string[] = []
      for (const route of bodyRoutes(t)) {
        const res = await t.request(route.method, fill(route, 'alice', '1'), {
          headers: { ...credentialFor(route, alice), 'content-type': contentType },
          body,
        })
        const hasBody = res.status !== 204 && (res.headers.get('content-type') ?? '').includes('json')
        if (res.status < 400 || res.status >= 500 || !hasBody) outcomes.push(`${route.method} ${route.path} → ${res.status}`)
      }
      // Routes that take no body at all may ignore what is sent.
      const bodyless = [
        '/following/',
        '/validate/',
        '/avatar/delete',
        '/twofa/disable',
        '/twofa/regenerate_scratch',
        '/account/delete',
        '/email/delete',
      ]
      expect(outcomes.filter((o) => contentType === 'application/json' || !bodyless.some((p) => o.includes(p)))).toEqual([])
    })
  }

  test('a site admin sends a JSON text as text/plain to every POST/PUT/PATCH route → 415, nothing changes', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    // Org and cluster routes check the org (and team) or the cluster before the body: give them real ones.
    expect((await t.as(admin).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    await deadRegistrationFixture(t, admin.user, '1')
    const [owners] = await (await t.as(admin).get('/api/v1/orgs/acme/teams')).json()
    const outcomes: string[] = []
    for (const route of bodyRoutes(t).filter((r) => !r.path.startsWith('/login/oauth/access_token'))) {
      const path = fill(route, 'root', '1')
        .replace('/orgs/1/', '/orgs/acme/')
        .replace(/\/orgs\/1$/, '/orgs/acme')
        .replace('/teams/1', `/teams/${owners.id}`)
        .replace('/clustersv2/1/1', '/clustersv2/root/1')
      const res = await t.request(route.method, path, {
        headers: { ...credentialFor(route, admin), 'content-type': 'text/plain' },
        body: JSON.stringify({ full_name: 'Changed', name: 'renamed', emails: ['x@example.com'], pageSize: 5 }),
      })
      if (res.status !== 415) outcomes.push(`${route.method} ${route.path} → ${res.status}`)
    }
    expect(outcomes).toEqual([])
    const me = await (await t.as(admin).get('/api/v1/user')).json()
    expect(me).toMatchObject({ login: 'root', full_name: '' })
  })
})

describe('secret canaries', () => {
  test('a user creates a token, an OAuth2 secret, a TOTP secret, a scratch token and a session; every GET route as everyone → none of them in a body, header or log line', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const admin = await t.admin()
    const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'canary' })).json()
    const viaBasic = await (
      await t.request('POST', '/api/v1/users/alice/tokens', {
        headers: { authorization: basic('alice', PASSWORD) },
        body: { name: 'canary2' },
      })
    ).json()
    const app = await (
      await t.as(alice).send('POST', '/api/v1/user/settings/applications/oauth2', {
        name: 'canary app',
        redirect_uris: ['https://app.example.com/cb'],
        confidential_client: true,
      })
    ).json()
    const session = await startSession(t.deps.db, alice.user, { ip: '192.0.2.1', userAgent: 'canary', remember: false }, t.clock.seconds())
    const { secret } = await (await t.as(alice).get('/api/v1/user/settings/security/twofa/enroll')).json()
    const scratch = await (
      await t.as(alice).send('POST', '/api/v1/user/settings/security/twofa/enroll', { passcode: await generate({ secret }) })
    ).json()
    const canaries = {
      token: created.token as string,
      basicToken: viaBasic.sha1 as string,
      clientSecret: app.client_secret as string,
      totpSecret: secret as string,
      scratch: scratch as string,
      session: session.secret,
      csrf: session.csrfToken,
      password: PASSWORD,
    }
    for (const [name, value] of Object.entries(canaries))
      expect({ name, value: typeof value === 'string' && value.length >= 8 }).toEqual({ name, value: true })

    const callers: Record<string, Record<string, string>> = {
      anonymous: {},
      alice: { authorization: `token ${created.token}` },
      aliceCookie: { cookie: `platform_session=${session.secret}; _csrf=${session.csrfToken}` },
      bob: { authorization: `token ${bob.token}` },
      admin: { authorization: `token ${admin.token}` },
      adminAsAlice: { authorization: `token ${admin.token}`, sudo: 'alice' },
    }
    const seen: string[] = []
    for (const route of t.app.routes.filter((r) => r.method === 'GET' && !r.path.startsWith('/api/v1/swagger'))) {
      for (const [who, headers] of Object.entries(callers)) {
        for (const id of ['1', String(app.id)]) {
          const res = await t.request('GET', fill(route, 'alice', id), { headers: { ...headers, 'x-request-id': `canary-${who}` } })
          seen.push(`${route.path} ${who}: ${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${await res.text()}`)
        }
      }
    }
    await t.logFor('canary-adminAsAlice')
    const leaks = Object.entries(canaries).flatMap(([name, value]) => [
      ...seen.filter((s) => s.includes(value)).map((s) => `${name} in response ${s.slice(0, 80)}`),
      ...t.logs.filter((l) => l.includes(value)).map((l) => `${name} in log ${l.slice(0, 120)}`),
    ])
    expect(leaks).toEqual([])
  })
})
