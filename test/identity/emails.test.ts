import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/identity/emails/service'
import { makeHttpTestApp } from './http'

describe('/api/v1/user/emails', () => {
  test('list → the primary address, verified and primary', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).get('/api/v1/user/emails')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([{ email: 'alice@example.com', verified: true, primary: true }])
  })

  test('add → 201 with the full list; the new address is not primary', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice2@x.test'] })
    expect(res.status).toBe(201)
    expect(await res.json()).toEqual([
      { email: 'alice@example.com', verified: true, primary: true },
      { email: 'alice2@x.test', verified: true, primary: false },
    ])
  })

  test("add someone else's address (any case) → 422 naming it; nothing added", async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    const res = await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['new@x.test', 'BOB@example.com'] })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(`${Messages.emailUsed}: bob@example.com`)
    expect(await (await t.as(alice).get('/api/v1/user/emails')).json()).toHaveLength(1)
  })

  test('add own existing address → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice@example.com'] })).status).toBe(422)
  })

  test('add an invalid address → 422; an empty list → 422; a missing field → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['notAnEmail'] })).status).toBe(422)
    const empty = await t.as(alice).send('POST', '/api/v1/user/emails', { emails: [] })
    expect(empty.status).toBe(422)
    expect((await empty.json()).message).toBe(Messages.emailListEmpty)
    expect((await t.as(alice).send('POST', '/api/v1/user/emails', {})).status).toBe(422)
  })

  test('delete → 204; again → 404', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice2@x.test'] })
    expect((await t.as(alice).delete('/api/v1/user/emails', { emails: ['alice2@x.test'] })).status).toBe(204)
    expect((await t.as(alice).delete('/api/v1/user/emails', { emails: ['alice2@x.test'] })).status).toBe(404)
  })

  test('delete the primary address → 422 and it stays', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).delete('/api/v1/user/emails', { emails: ['alice@example.com'] })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.primaryNotDeletable)
    expect(await (await t.as(alice).get('/api/v1/user/emails')).json()).toHaveLength(1)
  })

  test('delete is all-or-nothing: one unowned address → 404 and the owned one stays', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice2@x.test'] })
    expect((await t.as(alice).delete('/api/v1/user/emails', { emails: ['alice2@x.test', 'bob@example.com'] })).status).toBe(404)
    expect(await (await t.as(alice).get('/api/v1/user/emails')).json()).toHaveLength(2)
  })

  test('anonymous → 401; a read:user token cannot add → 403', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.request('GET', '/api/v1/user/emails')).status).toBe(401)
    const { mintToken } = await import('../../src/identity/tokens/service')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'ro', scopes: ['read:user'] })
    expect((await t.request('POST', '/api/v1/user/emails', { token: plaintext, body: { emails: ['a@b.test'] } })).status).toBe(403)
  })
})

describe('/api/v1/user/settings/account/email', () => {
  const records = async (t: Awaited<ReturnType<typeof makeHttpTestApp>>, who: Parameters<typeof t.as>[0]) =>
    (await (await t.as(who).get('/api/v1/user/settings/account/email')).json()) as { id: number; email: string; is_primary: boolean }[]

  test('list → raw records with ids', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect(await records(t, alice)).toMatchObject([
      { email: 'alice@example.com', is_primary: true, is_activated: true, uid: alice.user.id },
    ])
  })

  test('add via the settings form → 200 and listed', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/account/email', { email: 'alt@x.test' })).status).toBe(200)
    expect((await records(t, alice)).map((r) => r.email)).toEqual(['alice@example.com', 'alt@x.test'])
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/account/email', { email: 'bad' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/account/email', {})).status).toBe(422)
  })

  test('_method=PRIMARY&id=<mine> → that address becomes primary and GET /user shows it', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alt@x.test'] })
    const alt = (await records(t, alice)).find((r) => r.email === 'alt@x.test')!
    expect((await t.as(alice).send('POST', `/api/v1/user/settings/account/email?_method=PRIMARY&id=${alt.id}`)).status).toBe(200)
    expect((await records(t, alice)).filter((r) => r.is_primary).map((r) => r.email)).toEqual(['alt@x.test'])
    expect((await (await t.as(alice).get('/api/v1/user')).json()).email).toBe('alt@x.test')
  })

  test("_method=PRIMARY with someone else's address id → 404 and nothing changes", async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const bobs = (await records(t, bob))[0]
    expect((await t.as(alice).send('POST', `/api/v1/user/settings/account/email?_method=PRIMARY&id=${bobs.id}`)).status).toBe(404)
    expect((await (await t.as(alice).get('/api/v1/user')).json()).email).toBe('alice@example.com')
  })

  test("delete?id=<mine> → 200; the primary → 422; someone else's → 404; missing id → 422", async () => {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alt@x.test'] })
    const [primary, alt] = await records(t, alice)
    const bobs = (await records(t, bob))[0]
    expect((await t.as(alice).send('POST', `/api/v1/user/settings/account/email/delete?id=${bobs.id}`)).status).toBe(404)
    expect((await t.as(alice).send('POST', `/api/v1/user/settings/account/email/delete?id=${primary.id}`)).status).toBe(422)
    expect((await t.as(alice).send('POST', `/api/v1/user/settings/account/email/delete?id=${alt.id}`)).status).toBe(200)
    expect(await records(t, alice)).toHaveLength(1)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/account/email/delete')).status).toBe(422)
    expect(await records(t, bob)).toHaveLength(1)
  })
})
