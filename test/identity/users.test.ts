import { describe, expect, test } from 'bun:test'
import { updateUser } from '../../src/identity/store'
import { Messages } from '../../src/identity/users/service'
import type { TestApp, TestUser } from '../support/app'
import { makeHttpTestApp } from './http'

const setVisibility = (t: TestApp, who: TestUser, visibility: 0 | 1 | 2) =>
  t.deps.db.write((tx) => updateUser(tx, who.user.id, { visibility }))

describe('GET /api/v1/users/search', () => {
  test('anonymous search by substring → {ok, data} of matching users with placeholder emails', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice', 'malika', 'bob')
    const res = await t.request('GET', '/api/v1/users/search?q=ALI')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.ok).toBe(true)
    expect(body.data.map((u: { login: string }) => u.login)).toEqual(['alice', 'malika'])
    expect(body.data[0].email).toBe('alice@noreply.localhost')
    expect(res.headers.get('x-total-count')).toBe('2')
  })

  test('a signed-in caller sees real emails of users who do not hide them', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    const body = await (await t.as(alice).get('/api/v1/users/search?q=bob')).json()
    expect(body.data[0].email).toBe('bob@example.com')
  })

  test('a private user is hidden from anonymous and plain users, shown to admins and herself', async () => {
    const t = await makeHttpTestApp()
    const [priv, bob] = await t.users('priv', 'bob')
    await setVisibility(t, priv, 2)
    const admin = await t.admin()
    expect((await (await t.request('GET', '/api/v1/users/search?q=priv')).json()).data).toEqual([])
    expect((await (await t.as(bob).get('/api/v1/users/search?q=priv')).json()).data).toEqual([])
    const asAdmin = (await (await t.as(admin).get('/api/v1/users/search?q=priv')).json()).data
    expect(asAdmin).toMatchObject([{ login: 'priv', visibility: 'private' }])
    expect((await (await t.as(priv).get('/api/v1/users/search?q=priv')).json()).data).toHaveLength(1)
  })

  test('a limited user is hidden from anonymous callers, visible to signed-in ones', async () => {
    const t = await makeHttpTestApp()
    const [ltd, bob] = await t.users('ltd', 'bob')
    await setVisibility(t, ltd, 1)
    expect((await (await t.request('GET', '/api/v1/users/search?q=ltd')).json()).data).toEqual([])
    expect((await (await t.as(bob).get('/api/v1/users/search?q=ltd')).json()).data).toHaveLength(1)
  })

  test('limit=1 → one item, X-Total-Count = total, Link with next and last in Gitea format', async () => {
    const t = await makeHttpTestApp()
    await t.users('u1', 'u2', 'u3')
    const res = await t.request('GET', '/api/v1/users/search?limit=1&q=u')
    expect((await res.json()).data).toHaveLength(1)
    expect(res.headers.get('x-total-count')).toBe('3')
    expect(res.headers.get('link')).toBe(
      '<http://localhost:3000/api/v1/users/search?limit=1&page=2&q=u>; rel="next",<http://localhost:3000/api/v1/users/search?limit=1&page=3&q=u>; rel="last"',
    )
  })

  test('page 2 of 3 → Link has next, last, first and prev', async () => {
    const t = await makeHttpTestApp()
    await t.users('u1', 'u2', 'u3')
    const res = await t.request('GET', '/api/v1/users/search?limit=1&page=2&q=u')
    expect((await res.json()).data[0].login).toBe('u2')
    const link = res.headers.get('link')!
    expect(link.split(',').map((part) => part.split('; ')[1])).toEqual(['rel="next"', 'rel="last"', 'rel="first"', 'rel="prev"'])
  })

  test('junk page and limit → page 1 with the default size; limit above 50 is clamped', async () => {
    const t = await makeHttpTestApp()
    const names = Array.from({ length: 52 }, (_, i) => `user${i}`)
    await t.users(...names)
    const junk = await t.request('GET', '/api/v1/users/search?page=-3&limit=abc')
    expect((await junk.json()).data).toHaveLength(30)
    const big = await t.request('GET', '/api/v1/users/search?limit=1000')
    expect((await big.json()).data).toHaveLength(50)
    expect(big.headers.get('x-total-count')).toBe('52')
  })

  test("a user's saved page size becomes their default limit", async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob', 'carol')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/pagination', { pageSize: 2 })).status).toBe(200)
    const body = await (await t.as(alice).get('/api/v1/users/search')).json()
    expect(body.data).toHaveLength(2)
  })

  test('uid=<id> → exactly that user', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    const body = await (await t.request('GET', `/api/v1/users/search?uid=${alice.user.id}`)).json()
    expect(body.data.map((u: { login: string }) => u.login)).toEqual(['alice'])
  })

  test('organizations never appear in user search', async () => {
    const t = await makeHttpTestApp()
    await t.deps.db.write((tx) =>
      import('../../src/identity/store').then((s) => s.insertUser(tx, { name: 'acme', lowerName: 'acme', type: 1 })),
    )
    const body = await (await t.request('GET', '/api/v1/users/search?q=acme')).json()
    expect(body.data).toEqual([])
  })

  test('LIKE wildcards in q are literal', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice', 'bob')
    expect((await (await t.request('GET', '/api/v1/users/search?q=%25')).json()).data).toEqual([])
    expect((await (await t.request('GET', '/api/v1/users/search?q=_')).json()).data).toEqual([])
  })
})

describe('GET /api/v1/users/:username', () => {
  test('anonymous → 200 with login = username, is_admin false, placeholder email; name is case-insensitive', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await t.request('GET', '/api/v1/users/ALICE')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      login: 'alice',
      username: 'alice',
      is_admin: false,
      email: 'alice@noreply.localhost',
      followers_count: 0,
    })
  })

  test('a private user: anonymous → 404, another user → 404, herself and an admin → 200', async () => {
    const t = await makeHttpTestApp()
    const [priv, bob] = await t.users('priv', 'bob')
    const admin = await t.admin()
    await setVisibility(t, priv, 2)
    expect((await t.request('GET', '/api/v1/users/priv')).status).toBe(404)
    expect((await t.as(bob).get('/api/v1/users/priv')).status).toBe(404)
    expect((await t.as(priv).get('/api/v1/users/priv')).status).toBe(200)
    expect((await t.as(admin).get('/api/v1/users/priv')).status).toBe(200)
  })

  test('keep_email_private hides the email from other signed-in users but not from admins', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const admin = await t.admin()
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { keepEmailPrivate: true }))
    expect((await (await t.as(bob).get('/api/v1/users/alice')).json()).email).toBe('alice@noreply.localhost')
    expect((await (await t.as(admin).get('/api/v1/users/alice')).json()).email).toBe('alice@example.com')
  })

  test('an unknown user → 404 {message, url}', async () => {
    const t = await makeHttpTestApp()
    const res = await t.request('GET', '/api/v1/users/nosuchuser')
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ message: Messages.userNotFound, url: expect.any(String) })
  })

  test('an organization name → 404 (individual users only)', async () => {
    const t = await makeHttpTestApp()
    await t.deps.db.write((tx) =>
      import('../../src/identity/store').then((s) => s.insertUser(tx, { name: 'acme', lowerName: 'acme', type: 1 })),
    )
    expect((await t.request('GET', '/api/v1/users/acme')).status).toBe(404)
  })
})

describe('GET /api/v1/user', () => {
  test('self → real email, is_admin false, active true; no clientOrgUser without the query', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const body = await (await t.as(alice).get('/api/v1/user')).json()
    expect(body).toMatchObject({ email: 'alice@example.com', is_admin: false, active: true })
    expect('clientOrgUser' in body).toBe(false)
  })

  test('?check_client_org=true → clientOrgUser false (the platform has no client organizations)', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const body = await (await t.as(alice).get('/api/v1/user?check_client_org=true')).json()
    expect(body.clientOrgUser).toBe(false)
  })
})

describe('POST /api/v1/user/validate/*', () => {
  test.each([
    ['alice2', 'VALID'],
    ['Alice', 'USER_EXISTS'],
    ['acme', 'USER_EXISTS'],
    ['api', 'RESERVED'],
    ['ghost', 'RESERVED'],
    ['foo.keys', 'NOT_ALLOWED'],
    ['-x', 'INVALID'],
    ['a..b', 'INVALID'],
    ['a-', 'INVALID'],
    ['é', 'INVALID'],
    ['x'.repeat(41), 'INVALID'],
    ['', 'INVALID'],
  ])('username %p → %s', async (name, status) => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write((tx) =>
      import('../../src/identity/store').then((s) => s.insertUser(tx, { name: 'acme', lowerName: 'acme', type: 1 })),
    )
    const res = await t.as(alice).send('POST', `/api/v1/user/validate/username?user_name=${encodeURIComponent(name)}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ Status: status })
  })

  test('orgname: the org keeping its own name → VALID; another taken name → USER_EXISTS', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write((tx) =>
      import('../../src/identity/store').then((s) => s.insertUser(tx, { name: 'acme', lowerName: 'acme', type: 1 })),
    )
    expect(await (await t.as(alice).send('POST', '/api/v1/user/validate/orgname?org=acme&user_name=ACME')).json()).toEqual({
      Status: 'VALID',
    })
    expect(await (await t.as(alice).send('POST', '/api/v1/user/validate/orgname?org=acme&user_name=alice')).json()).toEqual({
      Status: 'USER_EXISTS',
    })
    expect(await (await t.as(alice).send('POST', '/api/v1/user/validate/orgname?user_name=new-org')).json()).toEqual({ Status: 'VALID' })
  })

  test.each([
    ['fresh@example.com', 'VALID'],
    ['ALICE@example.com', 'USER_EXISTS'],
    ['not-an-email', 'INVALID'],
    ['', 'INVALID'],
  ])('email %p → %s', async (email, status) => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', `/api/v1/user/validate/email?email=${encodeURIComponent(email)}`)
    expect(await res.json()).toEqual({ Status: status })
  })

  test('a secondary address counts as taken', async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['second@example.com'] })
    expect(await (await t.as(bob).send('POST', '/api/v1/user/validate/email?email=second@example.com')).json()).toEqual({
      Status: 'USER_EXISTS',
    })
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('POST', '/api/v1/user/validate/username?user_name=x')).status).toBe(401)
  })
})
