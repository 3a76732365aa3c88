import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/identity/oauth2/service'
import { mintToken } from '../../src/identity/tokens/service'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

const BASE = '/api/v1/user/settings/applications/oauth2'
const params = { name: 'ci dashboard', redirect_uris: ['https://app.example.com/callback'], confidential_client: true }

async function create(t: TestApp, who: TestUser, body: unknown = params) {
  const res = await t.as(who).send('POST', BASE, body)
  expect(res.status).toBe(200)
  return res.json()
}

function form(fields: Record<string, string | string[]>): FormData {
  const data = new FormData()
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) data.append(key, v)
  return data
}

describe('OAuth2 applications', () => {
  test('a user creates an application → 200 with client_id and the client secret, once', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    expect(app).toMatchObject({ name: 'ci dashboard', redirect_uris: ['https://app.example.com/callback'], confidential_client: true })
    expect(app.client_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(app.client_secret).toMatch(/^pos_[A-Za-z0-9_-]{43}$/)
    expect(app.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    const listed = await (await t.as(alice).get(BASE)).json()
    expect(listed).toHaveLength(1)
    expect(listed[0].client_secret).toBeUndefined()
    const one = await (await t.as(alice).get(`${BASE}/${app.id}`)).json()
    expect(one.client_secret).toBeUndefined()
    const { client_secret: _secret, ...rest } = app
    expect(one).toEqual(rest)
  })

  test('the client secret is stored hashed and never logged', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    const rows = await t.deps.db.read.query.oauth2Applications.findMany()
    expect(JSON.stringify(rows)).not.toContain(app.client_secret)
    expect(t.logs.join('\n')).not.toContain(app.client_secret)
  })

  test('confidential_client omitted → true; false is kept', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await create(t, alice, { name: 'a', redirect_uris: ['http://127.0.0.1/cb'] })).confidential_client).toBe(true)
    expect((await create(t, alice, { ...params, confidential_client: false })).confidential_client).toBe(false)
  })

  test.each([
    ['no name', { redirect_uris: ['https://x.example/cb'] }],
    ['empty name', { name: '', redirect_uris: ['https://x.example/cb'] }],
    ['no redirect URIs', { name: 'x' }],
    ['an empty redirect list', { name: 'x', redirect_uris: [] }],
    ['a relative redirect URI', { name: 'x', redirect_uris: ['/callback'] }],
    ['a redirect URI with a fragment', { name: 'x', redirect_uris: ['https://x.example/cb#frag'] }],
    ['confidential_client not boolean', { name: 'x', redirect_uris: ['https://x.example/cb'], confidential_client: 'yes' }],
  ])('creating with %s → 422, nothing stored', async (_what, body) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', BASE, body)).status).toBe(422)
    expect(await (await t.as(alice).get(BASE)).json()).toEqual([])
  })

  test("another user's application or an unknown id → 404 on get and update", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const app = await create(t, bob)
    const res = await t.as(alice).get(`${BASE}/${app.id}`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(Messages.applicationNotFound)
    expect((await t.as(alice).get(`${BASE}/999`)).status).toBe(404)
    expect(
      (await t.as(alice).send('PUT', `${BASE}/${app.id}`, form({ name: 'stolen', redirect_uris: 'https://evil.example/cb' }))).status,
    ).toBe(404)
    expect((await (await t.as(bob).get(`${BASE}/${app.id}`)).json()).name).toBe('ci dashboard')
  })

  test('update (multipart, repeated redirect_uris) → 200 changed; client_id and secret kept', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    const res = await t.as(alice).send(
      'PUT',
      `${BASE}/${app.id}`,
      form({
        name: 'renamed',
        redirect_uris: ['https://a.example/cb', 'https://b.example/cb'],
        confidential_client: 'false',
      }),
    )
    expect(res.status).toBe(200)
    const updated = await res.json()
    expect(updated).toMatchObject({
      id: app.id,
      client_id: app.client_id,
      name: 'renamed',
      redirect_uris: ['https://a.example/cb', 'https://b.example/cb'],
      confidential_client: false,
    })
    expect(updated.client_secret).toBeUndefined()
  })

  test('update with one newline-separated redirect_uris value (Gitea form) → both URIs; confidential_client omitted → unchanged', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    const res = await t
      .as(alice)
      .send('PUT', `${BASE}/${app.id}`, form({ name: 'n', redirect_uris: 'https://a.example/cb\r\nhttps://b.example/cb\n' }))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ redirect_uris: ['https://a.example/cb', 'https://b.example/cb'], confidential_client: true })
  })

  test.each([
    ['no name', { redirect_uris: 'https://a.example/cb' }],
    ['a bad redirect URI', { name: 'n', redirect_uris: 'not a url' }],
    ['blank redirect URIs', { name: 'n', redirect_uris: '\n\n' }],
  ])('update with %s → 422, unchanged', async (_what, fields) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    expect((await t.as(alice).send('PUT', `${BASE}/${app.id}`, form(fields))).status).toBe(422)
    expect((await (await t.as(alice).get(`${BASE}/${app.id}`)).json()).redirect_uris).toEqual(params.redirect_uris)
  })

  test.each([
    ['GET', BASE],
    ['POST', BASE],
    ['GET', `${BASE}/1`],
    ['PUT', `${BASE}/1`],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    const body = method === 'POST' ? params : method === 'PUT' ? form({ name: 'n', redirect_uris: 'https://a.example/cb' }) : undefined
    expect((await t.request(method, path, { body })).status).toBe(401)
  })

  test.each([
    ['GET', BASE],
    ['POST', BASE],
    ['GET', `${BASE}/1`],
  ])('a token without user scope on %s %s → 403', async (method, path) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'org', scopes: ['write:organization'] })
    expect((await t.request(method, path, { token: plaintext, body: method === 'POST' ? params : undefined })).status).toBe(403)
  })
})
