import { describe, expect, test } from 'bun:test'
import { mintToken } from '../../src/identity/tokens/service'
import { basic, PASSWORD } from '../support/app'
import { makeHttpTestApp } from './http'

/**
 * `GET /api/v1/user` without a query is answered before Elysia's lifecycle (src/identity/routes.ts, selfRead);
 * with a query, the app's route of the same path answers. Whoever calls, both must give the same answer.
 */
describe('GET /api/v1/user answered outside the app lifecycle', () => {
  test('every kind of caller gets the same status, headers and body as from the app route', async () => {
    const t = await makeHttpTestApp()
    const admin = await t.admin()
    const [alice, bob] = await t.users('alice', 'bob')
    const orgOnly = await mintToken(t.deps.db, alice!.user.id, { name: 'org-only', scopes: ['read:organization'] })
    const readUser = await mintToken(t.deps.db, alice!.user.id, { name: 'read-user', scopes: ['read:user'] })
    const signIn = await t.request('POST', '/api/v1/user/signin', { body: { username: 'bob', password: PASSWORD } })
    const session = /platform_session=([^;]+)/.exec(signIn.headers.getSetCookie().join('\n'))?.[1]
    expect(session).toBeDefined()
    const newbie = { username: 'newbie', email: 'newbie@example.com', password: 'first-password-1', must_change_password: true }
    expect((await t.as(admin).send('POST', '/api/v1/admin/users', newbie)).status).toBe(201)
    const callers: Record<string, Record<string, string>> = {
      anonymous: {},
      'an unknown token': { authorization: 'token 0123456789abcdef0123456789abcdef01234567' },
      'a malformed Authorization header': { authorization: 'Negotiate abc' },
      'a token with read:user': { authorization: `token ${readUser.plaintext}` },
      'a token without a user scope': { authorization: `token ${orgOnly.plaintext}` },
      'Basic with a password': { authorization: basic('alice', PASSWORD) },
      'Basic with a wrong password': { authorization: basic('alice', 'wrong password') },
      'a user who must change the password, signed in with it': { authorization: basic('newbie', 'first-password-1') },
      'a session cookie': { cookie: `platform_session=${session}` },
      'an admin with sudo: alice': { authorization: `token ${admin.token}`, sudo: 'alice' },
      'a user with sudo: alice': { authorization: `token ${bob!.token}`, sudo: 'alice' },
    }
    const seen = new Set<number>()
    for (const [who, headers] of Object.entries(callers)) {
      // Twice each: the second call of a token finds its sign-in cached (the path that does not wait).
      for (let call = 0; call < 2; call++) {
        const lean = await answerOf(await t.request('GET', '/api/v1/user', { headers }))
        const routed = await answerOf(await t.request('GET', '/api/v1/user?check_client_org=false', { headers }))
        expect({ who, ...lean }).toEqual({ who, ...routed })
        seen.add(lean.status)
      }
    }
    // The callers above reach every answer of the route.
    expect([...seen].sort()).toEqual([200, 401, 403])
  })

  test('a token whose sign-in is cached stops working once it expires, and once it is deleted', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const expiring = await mintToken(t.deps.db, alice!.user.id, { name: 'soon', scopes: ['all'], expiresAt: t.clock.seconds() + 60 })
    for (let call = 0; call < 3; call++) expect((await t.request('GET', '/api/v1/user', { token: expiring.plaintext })).status).toBe(200)
    t.clock.advance(61_000)
    expect((await t.request('GET', '/api/v1/user', { token: expiring.plaintext })).status).toBe(401)

    const kept = await mintToken(t.deps.db, alice!.user.id, { name: 'kept', scopes: ['all'] })
    for (let call = 0; call < 3; call++) expect((await t.request('GET', '/api/v1/user', { token: kept.plaintext })).status).toBe(200)
    expect((await t.as(alice!).delete(`/api/v1/user/settings/tokens/access-tokens/${kept.row.id}`)).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { token: kept.plaintext })).status).toBe(401)
  })
})

/** What a client sees of an answer, less the request id (new each time). */
async function answerOf(response: Response) {
  const headers = Object.fromEntries([...response.headers].filter(([name]) => name !== 'x-request-id' && name !== 'date'))
  return { status: response.status, headers, body: await response.text() }
}
