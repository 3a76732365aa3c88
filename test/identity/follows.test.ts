import { describe, expect, test } from 'bun:test'
import { updateUser } from '../../src/identity/store'
import { Messages } from '../../src/identity/users/service'
import { makeHttpTestApp } from './http'

const logins = async (res: Response) => ((await res.json()) as { login: string }[]).map((u) => u.login)

describe('follow relations', () => {
  test("alice follows bob → 204; her following lists bob; bob's followers (read by carol) list alice", async () => {
    const t = await makeHttpTestApp()
    const [alice, , carol] = await t.users('alice', 'bob', 'carol')
    expect((await t.as(alice).send('PUT', '/api/v1/user/following/bob')).status).toBe(204)
    expect(await logins(await t.as(alice).get('/api/v1/user/following'))).toEqual(['bob'])
    const res = await t.as(carol).get('/api/v1/users/bob/followers')
    expect(await logins(res)).toEqual(['alice'])
    expect(res.headers.get('x-total-count')).toBe('1')
    expect(await logins(await t.as(carol).get('/api/v1/users/alice/following'))).toEqual(['bob'])
  })

  test('bob lists his own followers → [alice] with the counters updated on the profile', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    expect(await logins(await t.as(bob).get('/api/v1/user/followers'))).toEqual(['alice'])
    expect(await (await t.request('GET', '/api/v1/users/bob')).json()).toMatchObject({ followers_count: 1, following_count: 0 })
  })

  test('check: alice follows bob → 204; bob does not follow alice → 404', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    expect((await t.as(alice).get('/api/v1/user/following/bob')).status).toBe(204)
    const no = await t.as(bob).get('/api/v1/user/following/alice')
    expect(no.status).toBe(404)
    expect((await no.json()).message).toBe(Messages.notFollowing)
    expect((await t.as(bob).get('/api/v1/users/alice/following/bob')).status).toBe(204)
    expect((await t.as(alice).get('/api/v1/users/bob/following/alice')).status).toBe(404)
  })

  test('following oneself → 204 and no self-follow recorded', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('PUT', '/api/v1/user/following/alice')).status).toBe(204)
    expect(await logins(await t.as(alice).get('/api/v1/user/followers'))).toEqual([])
  })

  test('following twice → 204 both times and one follower', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    expect((await t.as(alice).send('PUT', '/api/v1/user/following/bob')).status).toBe(204)
    expect((await t.as(alice).get('/api/v1/users/bob/followers')).headers.get('x-total-count')).toBe('1')
  })

  test('following an unknown user → 404; a private user (not visible) → 404', async () => {
    const t = await makeHttpTestApp()
    const [alice, priv] = await t.users('alice', 'priv')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    expect((await t.as(alice).send('PUT', '/api/v1/user/following/nosuchuser')).status).toBe(404)
    expect((await t.as(alice).send('PUT', '/api/v1/user/following/priv')).status).toBe(404)
    expect((await t.as(alice).get('/api/v1/users/priv/followers')).status).toBe(404)
  })

  test('unfollow → 204; again → 204; the list is empty; unknown user → 404', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    expect((await t.as(alice).delete('/api/v1/user/following/bob')).status).toBe(204)
    expect((await t.as(alice).delete('/api/v1/user/following/bob')).status).toBe(204)
    expect(await logins(await t.as(alice).get('/api/v1/user/following'))).toEqual([])
    expect((await t.as(alice).delete('/api/v1/user/following/nosuchuser')).status).toBe(404)
  })

  test('lists of an unknown user → 404', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).get('/api/v1/users/nosuchuser/followers')).status).toBe(404)
    expect((await t.as(alice).get('/api/v1/users/nosuchuser/following')).status).toBe(404)
    expect((await t.as(alice).get('/api/v1/users/alice/following/nosuchuser')).status).toBe(404)
  })

  test('a private follower is left out of lists other users read', async () => {
    const t = await makeHttpTestApp()
    const [alice, priv, carol] = await t.users('alice', 'priv', 'carol')
    await t.as(alice).send('PUT', '/api/v1/user/following/carol')
    await t.as(priv).send('PUT', '/api/v1/user/following/carol')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    const res = await t.as(alice).get('/api/v1/users/carol/followers')
    expect(await logins(res)).toEqual(['alice'])
    expect(res.headers.get('x-total-count')).toBe('1')
    expect(await logins(await t.as(carol).get('/api/v1/user/followers'))).toEqual(['alice'])
  })

  test('page and limit paginate follower lists', async () => {
    const t = await makeHttpTestApp()
    const [target, ...fans] = await t.users('target', 'f1', 'f2', 'f3')
    for (const fan of fans) await t.as(fan).send('PUT', '/api/v1/user/following/target')
    const res = await t.as(target).get('/api/v1/user/followers?limit=2&page=2')
    expect(await logins(res)).toEqual(['f3'])
    expect(res.headers.get('x-total-count')).toBe('3')
  })

  test.each([
    ['GET', '/api/v1/users/bob/followers'],
    ['GET', '/api/v1/users/bob/following'],
    ['GET', '/api/v1/users/bob/following/alice'],
    ['GET', '/api/v1/user/followers'],
    ['GET', '/api/v1/user/following'],
    ['PUT', '/api/v1/user/following/bob'],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeHttpTestApp()
    await t.users('alice', 'bob')
    expect((await t.request(method, path)).status).toBe(401)
  })

  test('a read:user token cannot follow (write:user needed) → 403', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    const { mintToken } = await import('../../src/identity/tokens/service')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'ro', scopes: ['read:user'] })
    expect((await t.request('PUT', '/api/v1/user/following/bob', { token: plaintext })).status).toBe(403)
    expect((await t.request('GET', '/api/v1/user/following', { token: plaintext })).status).toBe(200)
  })
})
