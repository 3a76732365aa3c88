import { describe, expect, test } from 'bun:test'
import { SESSION_STARTING_PATHS } from '../../src/http/auth'
import { basic, makeTestApp } from '../support/app'

/** Decisions §1: a credential that is present but invalid is 401 on every route, public ones included. */
describe('invalid credentials on every route', () => {
  const carriers: [string, (path: string) => [string, Record<string, string>]][] = [
    ['?token=', (p) => [`${p}?token=${'a'.repeat(40)}`, {}]],
    ['?access_token=', (p) => [`${p}?access_token=${'b'.repeat(40)}`, {}]],
    ['Authorization: token', (p) => [p, { authorization: `token ${'c'.repeat(40)}` }]],
    ['Authorization: bearer', (p) => [p, { authorization: `Bearer ${'d'.repeat(40)}` }]],
    ['Basic with a wrong password', (p) => [p, { authorization: basic('nobody', 'wrong password') }]],
    ['an unknown session cookie', (p) => [p, { cookie: 'platform_session=unknown-session-value' }]],
  ]
  /**
   * Where the Authorization header or the cookie means something else (the OAuth2 token endpoint
   * authenticates clients; sign-in and its second steps start a new session), and the static API documentation, which
   * knows nobody and must open even in a browser holding a dead session cookie. `/metrics` takes no account's
   * credential at all: it is off (404) unless PLATFORM_METRICS_TOKEN is set (test/operations/metrics.test.ts).
   */
  const exempt = (path: string, carrier: string) =>
    (path === '/login/oauth/access_token' && /^(Authorization|Basic)/.test(carrier)) ||
    (SESSION_STARTING_PATHS.has(path) && carrier === 'an unknown session cookie') ||
    path.startsWith('/api/v1/swagger') ||
    path === '/metrics'

  for (const [carrier, place] of carriers) {
    test(`a caller presents an invalid credential via ${carrier} on every route → 401`, async () => {
      const t = await makeTestApp()
      await t.users('alice')
      const outcomes: string[] = []
      for (const route of t.app.routes.filter((r) => !exempt(r.path, carrier))) {
        const [path, headers] = place(route.path.replace(/:(\w+)/g, (_, n: string) => (n === 'username' ? 'alice' : '1')))
        const res = await t.request(route.method, path, {
          headers: { ...headers, 'content-type': 'application/json' },
          body: route.method === 'GET' ? undefined : '{}',
        })
        // Wrong passwords also count towards the per-address lock: 429 is as much a refusal.
        if (res.status !== 401 && !(carrier.startsWith('Basic') && res.status === 429))
          outcomes.push(`${route.method} ${route.path} → ${res.status}`)
      }
      expect(outcomes).toEqual([])
    })
  }
})
