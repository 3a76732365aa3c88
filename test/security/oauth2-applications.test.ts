import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/identity/oauth2/service'
import { mintToken } from '../../src/identity/tokens/service'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'

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

const VERIFIER = 'a-pkce-verifier-of-at-least-forty-three-characters-0123456789'

/** Alice approves her own application by Basic password and its code is exchanged: the grant's tokens. */
async function grantedTokens(t: TestApp, app: { client_id: string; client_secret: string }) {
  const redirect_uri = params.redirect_uris[0]!
  const challenge = new Bun.CryptoHasher('sha256').update(VERIFIER).digest('base64url')
  const approval = await t.request('POST', '/login/oauth/grant', {
    headers: { authorization: basic('alice', PASSWORD) },
    body: {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri,
      scope: 'read:user',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      granted: true,
    },
  })
  const code = new URL(approval.headers.get('location')!).searchParams.get('code')!
  const exchange = { grant_type: 'authorization_code', code, redirect_uri, code_verifier: VERIFIER }
  return (await (await tokenRequest(t, exchange, app.client_secret, app.client_id)).json()) as {
    access_token: string
    refresh_token: string
  }
}

const tokenRequest = (t: TestApp, fields: Record<string, string>, secret: string, clientId: string) =>
  t.request('POST', '/login/oauth/access_token', {
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret) },
  })

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

  test('the owner deletes an application → 204, gone from the list; the tokens it was granted → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    const tokens = await grantedTokens(t, app)
    expect((await t.request('GET', '/api/v1/user', { token: tokens.access_token })).status).toBe(200)
    expect((await t.as(alice).send('DELETE', `${BASE}/${app.id}`)).status).toBe(204)
    expect(await (await t.as(alice).get(BASE)).json()).toEqual([])
    expect((await t.request('GET', '/api/v1/user', { token: tokens.access_token })).status).toBe(401)
    const refresh = await tokenRequest(
      t,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      app.client_secret,
      app.client_id,
    )
    expect(refresh.status).toBe(401)
  })

  test("deleting another user's application or an unknown id → 404, nothing deleted", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const app = await create(t, bob)
    const res = await t.as(alice).send('DELETE', `${BASE}/${app.id}`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(Messages.applicationNotFound)
    expect((await t.as(alice).send('DELETE', `${BASE}/999`)).status).toBe(404)
    expect((await t.as(bob).get(`${BASE}/${app.id}`)).status).toBe(200)
  })

  test('regenerate_secret → a new secret, once; the old one is refused at the token endpoint and the new one accepted', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await create(t, alice)
    const tokens = await grantedTokens(t, app)
    const res = await t.as(alice).send('POST', `${BASE}/${app.id}/regenerate_secret`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const renewed = await res.json()
    expect(renewed).toMatchObject({ id: app.id, client_id: app.client_id, name: app.name })
    expect(renewed.client_secret).toMatch(/^pos_[A-Za-z0-9_-]{43}$/)
    expect(renewed.client_secret).not.toBe(app.client_secret)
    expect((await (await t.as(alice).get(`${BASE}/${app.id}`)).json()).client_secret).toBeUndefined()
    const refresh = (secret: string) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, secret, app.client_id).then((r) => r.status)
    expect(await refresh(app.client_secret)).toBe(401)
    expect(await refresh(renewed.client_secret)).toBe(200)
  })

  test("regenerate_secret of another user's application → 404, their secret unchanged", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const app = await create(t, bob)
    expect((await t.as(alice).send('POST', `${BASE}/${app.id}/regenerate_secret`)).status).toBe(404)
    const [row] = await t.deps.db.read.query.oauth2Applications.findMany()
    expect(row!.clientSecretHash).toBe(new Bun.CryptoHasher('sha256').update(app.client_secret).digest('hex'))
  })

  test.each([
    ['GET', BASE],
    ['POST', BASE],
    ['GET', `${BASE}/1`],
    ['PUT', `${BASE}/1`],
    ['DELETE', `${BASE}/1`],
    ['POST', `${BASE}/1/regenerate_secret`],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    const body = method === 'POST' ? params : method === 'PUT' ? form({ name: 'n', redirect_uris: 'https://a.example/cb' }) : undefined
    expect((await t.request(method, path, { body })).status).toBe(401)
  })

  test.each([
    ['GET', BASE],
    ['POST', BASE],
    ['GET', `${BASE}/1`],
    ['DELETE', `${BASE}/1`],
    ['POST', `${BASE}/1/regenerate_secret`],
  ])('a token without user scope on %s %s → 403', async (method, path) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'org', scopes: ['write:organization'] })
    expect((await t.request(method, path, { token: plaintext, body: method === 'POST' ? params : undefined })).status).toBe(403)
  })
})
