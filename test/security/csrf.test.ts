import { describe, expect, test } from 'bun:test'
import { SESSION_STARTING_PATHS } from '../../src/http/auth'
import { startSession } from '../../src/identity/sessions/service'
import { makeTestApp } from '../support/app'

describe('CSRF check on cookie sessions', () => {
  test('a cookie POST whose X-Csrf-Token has the right length but non-ASCII text → 403, not 500', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const s = await startSession(t.deps.db, alice.user, { ip: '', userAgent: '', remember: false }, t.clock.seconds())
    const forged = `é${s.csrfToken.slice(1)}`
    const res = await t.request('POST', '/api/v1/user/emails', {
      headers: { cookie: `platform_session=${s.secret}; _csrf=${encodeURIComponent(forged)}`, 'x-csrf-token': forged },
      body: { emails: ['x@example.com'] },
    })
    expect(res.status).toBe(403)
  })

  test('every state-changing route refuses a cookie session without X-Csrf-Token → 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const s = await startSession(t.deps.db, alice.user, { ip: '', userAgent: '', remember: false }, t.clock.seconds())
    const cookie = `platform_session=${s.secret}; _csrf=${s.csrfToken}`
    const changing = t.app.routes.filter(
      (r) => !['GET', 'HEAD'].includes(r.method) && !SESSION_STARTING_PATHS.has(r.path) && r.path !== '/login/oauth/access_token',
    )
    expect(changing.length).toBeGreaterThan(30)
    const outcomes = []
    for (const route of changing) {
      // A route for every method (the cluster proxy) is tried with POST.
      const res = await t.request(
        route.method === 'ALL' ? 'POST' : route.method,
        route.path.replace(/:(\w+)/g, (_, n: string) => (n === 'username' ? 'alice' : '1')),
        {
          headers: { cookie, 'content-type': 'application/json' },
          body: '{}',
        },
      )
      outcomes.push([`${route.method} ${route.path}`, res.status])
    }
    expect(outcomes).toEqual(changing.map((r) => [`${r.method} ${r.path}`, 403]))
  })
})
