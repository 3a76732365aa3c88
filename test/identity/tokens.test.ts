import { describe, expect, test } from 'bun:test'
import { Messages as AuthzMessages } from '../../src/authz/authorize'
import { Messages, mintToken } from '../../src/identity/tokens/service'
import { asBasic, basic } from '../support/app'
import { eventually } from '../support/wait'
import { makeHttpTestApp } from './http'

describe('/api/v1/users/:username/tokens (Basic with password)', () => {
  test('create → 201 with id, name, 40-hex sha1 and its last eight; the token then authenticates', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 't1', scopes: ['all'] })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body).toMatchObject({ name: 't1', scopes: ['all'] })
    expect(body.sha1).toMatch(/^[0-9a-f]{40}$/)
    expect(body.token_last_eight).toBe(body.sha1.slice(-8))
    expect((await t.request('GET', '/api/v1/user', { token: body.sha1 })).status).toBe(200)
  })

  test('scopes default to ["all"]', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const body = await (await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 'd' })).json()
    expect(body.scopes).toEqual(['all'])
  })

  test('the same name again → 422', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 't1' })
    const res = await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 't1' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('has been used')
  })

  test('no name → 422; unknown scope → 422; empty scopes → 422', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    expect((await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', {})).status).toBe(422)
    const unknown = await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 'x', scopes: ['write:repository'] })
    expect(unknown.status).toBe(422)
    expect((await unknown.json()).message).toContain(Messages.scopeUnknown)
    const empty = await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 'x', scopes: [] })
    expect((await empty.json()).message).toBe(Messages.scopeMissing)
  })

  test('list → newest first, sha1 always empty, X-Total-Count', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 't1' })
    const res = await asBasic(t, 'alice', 'GET', '/api/v1/users/alice/tokens')
    expect(res.status).toBe(200)
    const list = await res.json()
    expect(list.map((x: { name: string }) => x.name)).toEqual(['t1', 'test'])
    expect(list.every((x: { sha1: string }) => x.sha1 === '')).toBe(true)
    expect(res.headers.get('x-total-count')).toBe('2')
  })

  test('with a token instead of a password (header, or Basic token) → 401', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).get('/api/v1/users/alice/tokens')
    expect(res.status).toBe(401)
    expect((await res.json()).message).toBe(AuthzMessages.passwordRequired)
    expect((await t.request('GET', '/api/v1/users/alice/tokens', { headers: { authorization: basic(alice.token, '') } })).status).toBe(401)
    expect((await t.request('GET', '/api/v1/users/alice/tokens', { headers: { authorization: basic('alice', alice.token) } })).status).toBe(
      401,
    )
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    expect((await t.request('GET', '/api/v1/users/alice/tokens')).status).toBe(401)
  })

  test("bob with his password on alice's tokens → 403; a site admin → 200", async () => {
    const t = await makeHttpTestApp()
    await t.users('alice', 'bob')
    await t.admin()
    const res = await asBasic(t, 'bob', 'GET', '/api/v1/users/alice/tokens')
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.selfOrAdminRequired)
    expect((await asBasic(t, 'bob', 'POST', '/api/v1/users/alice/tokens', { name: 'evil' })).status).toBe(403)
    expect((await asBasic(t, 'root', 'GET', '/api/v1/users/alice/tokens')).status).toBe(200)
  })

  test('delete a missing id → 404', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    expect((await asBasic(t, 'alice', 'DELETE', '/api/v1/users/alice/tokens/999999')).status).toBe(404)
  })

  test('delete by id: bob → 403; alice → 204 and the token no longer authenticates', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice', 'bob')
    const created = await (await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 't1' })).json()
    expect((await asBasic(t, 'bob', 'DELETE', `/api/v1/users/alice/tokens/${created.id}`)).status).toBe(403)
    expect((await asBasic(t, 'alice', 'DELETE', `/api/v1/users/alice/tokens/${created.id}`)).status).toBe(204)
    expect((await t.request('GET', '/api/v1/user', { token: created.sha1 })).status).toBe(401)
  })

  test("delete by name → 204; another user's token id through one's own path → 404", async () => {
    const t = await makeHttpTestApp()
    const [, bob] = await t.users('alice', 'bob')
    await asBasic(t, 'alice', 'POST', '/api/v1/users/alice/tokens', { name: 'byname' })
    expect((await asBasic(t, 'alice', 'DELETE', '/api/v1/users/alice/tokens/byname')).status).toBe(204)
    const bobs = await (await asBasic(t, 'bob', 'GET', '/api/v1/users/bob/tokens')).json()
    expect((await asBasic(t, 'alice', 'DELETE', `/api/v1/users/alice/tokens/${bobs[0].id}`)).status).toBe(404)
    expect((await t.as(bob).get('/api/v1/user')).status).toBe(200)
  })

  test('an unknown user in the path → 404', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    expect((await asBasic(t, 'alice', 'GET', '/api/v1/users/nosuchuser/tokens')).status).toBe(404)
  })
})

describe('/api/v1/user/settings/tokens/access-tokens/', () => {
  test('create → 201 SettingsAccessToken with the plaintext once; the list then shows it without the token', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'ci', scopes: ['read:user'] })
    expect(res.status).toBe(201)
    const created = await res.json()
    expect(created).toMatchObject({
      name: 'ci',
      uid: alice.user.id,
      scopes: ['read:user'],
      expDate: 0,
      hasUsed: false,
      hasRecentActivity: false,
    })
    expect(created.token).toMatch(/^[0-9a-f]{40}$/)
    expect(created.tokenLastEight).toBe(created.token.slice(-8))
    const list = await (await t.as(alice).get('/api/v1/user/settings/tokens/access-tokens/')).json()
    expect(list[0]).toMatchObject({ id: created.id, token: '' })
  })

  test('after use, hasUsed and hasRecentActivity are true', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'ci' })).json()
    expect((await t.request('GET', '/api/v1/user', { token: created.token })).status).toBe(200)
    // Use is recorded off the request's path: wait for the record, not for a fixed time.
    const listed = async () =>
      ((await (await t.as(alice).get('/api/v1/user/settings/tokens/access-tokens/')).json()) as { id: number; hasUsed: boolean }[]).find(
        (x) => x.id === created.id,
      )
    const row = await eventually(async () => {
      const r = await listed()
      return r?.hasUsed ? r : undefined
    })
    expect(row).toMatchObject({ hasUsed: true, hasRecentActivity: true })
  })

  test('expDate in the past → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t
      .as(alice)
      .send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'old', expDate: t.clock.seconds() - 10 })
    expect(res.status).toBe(422)
  })

  test('expDate in the future is kept, and the token works until then', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const expDate = t.clock.seconds() + 60
    const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'soon', expDate })).json()
    expect(created.expDate).toBe(expDate)
    expect((await t.request('GET', '/api/v1/user', { token: created.token })).status).toBe(200)
  })

  test('a token past its expDate → 401', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const created = await (
      await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'soon', expDate: t.clock.seconds() + 60 })
    ).json()
    t.clock.advance(61_000)
    expect((await t.request('GET', '/api/v1/user', { token: created.token })).status).toBe(401)
  })

  test('duplicate name → 422; missing name → 422; unknown scope → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'test' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', {})).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'x', scopes: ['root'] })).status).toBe(
      422,
    )
  })

  test('a read:user token cannot mint tokens (write:user needed) → 403; a write:user token cannot mint an "all" token → 403', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const ro = (await mintToken(t.deps.db, alice.user.id, { name: 'ro', scopes: ['read:user'] })).plaintext
    expect((await t.request('POST', '/api/v1/user/settings/tokens/access-tokens/', { token: ro, body: { name: 'x' } })).status).toBe(403)
    const rw = (await mintToken(t.deps.db, alice.user.id, { name: 'rw', scopes: ['write:user'] })).plaintext
    const wide = await t.request('POST', '/api/v1/user/settings/tokens/access-tokens/', { token: rw, body: { name: 'x', scopes: ['all'] } })
    expect(wide.status).toBe(403)
    expect((await wide.json()).message).toBe(Messages.scopeBeyondCaller)
    expect(
      (await t.request('POST', '/api/v1/user/settings/tokens/access-tokens/', { token: rw, body: { name: 'y', scopes: ['read:user'] } }))
        .status,
    ).toBe(201)
  })

  test('a read:organization token on a user route → 403', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const orgOnly = (await mintToken(t.deps.db, alice.user.id, { name: 'org', scopes: ['read:organization'] })).plaintext
    expect((await t.request('GET', '/api/v1/user/emails', { token: orgOnly })).status).toBe(403)
  })

  test("delete one → 200; again → 404; someone else's → 404", async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'x' })).json()
    expect((await t.as(bob).delete(`/api/v1/user/settings/tokens/access-tokens/${created.id}`)).status).toBe(404)
    expect((await t.as(alice).delete(`/api/v1/user/settings/tokens/access-tokens/${created.id}`)).status).toBe(200)
    expect((await t.as(alice).delete(`/api/v1/user/settings/tokens/access-tokens/${created.id}`)).status).toBe(404)
  })

  test("delete-records → 200 counting only the caller's tokens; empty ids → 422", async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const a1 = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'a1' })).json()
    const a2 = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'a2' })).json()
    const b1 = await (await t.as(bob).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'b1' })).json()
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/delete-records', { ids: [a1.id, a2.id, b1.id] })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ message: 'deleted 2 access token record(s)' })
    expect((await t.request('GET', '/api/v1/user', { token: b1.token })).status).toBe(200)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/delete-records', { ids: [] })).status).toBe(422)
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('GET', '/api/v1/user/settings/tokens/access-tokens/')).status).toBe(401)
  })
})
