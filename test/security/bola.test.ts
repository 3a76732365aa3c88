import { describe, expect, test } from 'bun:test'
import { insertLink } from '../../src/identity/security/account-links/store'
import { startSession } from '../../src/identity/sessions/service'
import { softRegistration } from '../security/soft-authenticator'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'

/**
 * T1, BOLA across users: bob acts on each of alice's objects by id → 404 (403 where the contract
 * says so), and alice's object is unchanged and still works afterwards.
 */

const ORIGIN = 'https://platform.example.com'
const SECURITY = '/api/v1/user/settings/security'

interface AliceObjects {
  tokenId: number
  token: string
  basicTokenId: number
  emailId: number
  keyId: number
  sid: string
  sessionHeaders: Record<string, string>
  appId: number
  linkSource: number
}

/** Gives alice one of everything that has an id. */
async function aliceObjects(t: TestApp, alice: TestUser): Promise<AliceObjects> {
  const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'mine' })).json()
  const viaBasic = await (
    await t.request('POST', '/api/v1/users/alice/tokens', { headers: { authorization: basic('alice', PASSWORD) }, body: { name: 'basic' } })
  ).json()
  expect((await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice2@example.com'] })).status).toBe(201)
  const records = await (await t.as(alice).get('/api/v1/user/settings/account/email')).json()
  const emailId = records.find((r: { email: string }) => r.email === 'alice2@example.com').id
  const options = (await (await t.as(alice).send('POST', `${SECURITY}/webauthn/request_register`, { name: 'key' })).json()).publicKey
  const key = await (
    await t.as(alice).send('POST', `${SECURITY}/webauthn/register`, await softRegistration(options, { origin: ORIGIN }))
  ).json()
  const session = await startSession(t.deps.db, alice.user, { ip: '192.0.2.1', userAgent: 'laptop', remember: false }, t.clock.seconds())
  const app = await (
    await t.as(alice).send('POST', '/api/v1/user/settings/applications/oauth2', {
      name: 'mine',
      redirect_uris: ['https://app.example.com/cb'],
      confidential_client: true,
    })
  ).json()
  await t.deps.db.write((tx) =>
    insertLink(tx, { uid: alice.user.id, sourceId: 7, provider: 'openidConnect', sourceName: 'sso-7', externalId: 'ext-alice' }),
  )
  return {
    tokenId: created.id,
    token: created.token,
    basicTokenId: viaBasic.id,
    emailId,
    keyId: key.id,
    sid: session.session.sid,
    sessionHeaders: { cookie: `platform_session=${session.secret}; _csrf=${session.csrfToken}` },
    appId: app.id,
    linkSource: 7,
  }
}

/** Everything of alice's still there and working. */
async function expectAliceIntact(t: TestApp, alice: TestUser, o: AliceObjects) {
  expect((await t.request('GET', '/api/v1/user', { token: o.token })).status).toBe(200)
  const tokens = await (await t.as(alice).get('/api/v1/user/settings/tokens/access-tokens/')).json()
  expect(tokens.map((x: { id: number }) => x.id)).toEqual(expect.arrayContaining([o.tokenId, o.basicTokenId]))
  const emails = await (await t.as(alice).get('/api/v1/user/settings/account/email')).json()
  expect(emails.map((e: { email: string; is_primary: boolean }) => [e.email, e.is_primary]).sort()).toEqual([
    ['alice2@example.com', false],
    ['alice@example.com', true],
  ])
  expect((await (await t.as(alice).get(`${SECURITY}/webauthn/keys`)).json()).map((k: { id: number }) => k.id)).toEqual([o.keyId])
  expect((await t.request('GET', '/api/v1/user', { headers: o.sessionHeaders })).status).toBe(200)
  expect((await t.as(alice).get(`/api/v1/user/settings/applications/oauth2/${o.appId}`)).status).toBe(200)
  expect(
    (
      await t
        .as(alice)
        .get(`/api/v1/user/settings/applications/oauth2/${o.appId}`)
        .then((r) => r.json())
    ).name,
  ).toBe('mine')
  expect((await (await t.as(alice).get(`${SECURITY}/account_link`)).json()).map((l: { id: number }) => l.id)).toEqual([o.linkSource])
}

describe('BOLA across users (T1)', () => {
  const cases: [string, (t: TestApp, bob: TestUser, o: AliceObjects) => Promise<Response>, number][] = [
    [
      "deletes alice's settings token by id",
      (t, bob, o) => t.as(bob).delete(`/api/v1/user/settings/tokens/access-tokens/${o.tokenId}`),
      404,
    ],
    [
      "deletes alice's token through his own Basic route",
      (t, _bob, o) =>
        t.request('DELETE', `/api/v1/users/bob/tokens/${o.basicTokenId}`, { headers: { authorization: basic('bob', PASSWORD) } }),
      404,
    ],
    [
      "deletes alice's token by name through his own Basic route",
      (t) => t.request('DELETE', '/api/v1/users/bob/tokens/basic', { headers: { authorization: basic('bob', PASSWORD) } }),
      404,
    ],
    [
      "deletes alice's token on alice's Basic route",
      (t, _bob, o) =>
        t.request('DELETE', `/api/v1/users/alice/tokens/${o.basicTokenId}`, { headers: { authorization: basic('bob', PASSWORD) } }),
      403,
    ],
    [
      "lists alice's tokens on alice's Basic route",
      (t) => t.request('GET', '/api/v1/users/alice/tokens', { headers: { authorization: basic('bob', PASSWORD) } }),
      403,
    ],
    [
      "creates a token on alice's Basic route",
      (t) =>
        t.request('POST', '/api/v1/users/alice/tokens', { headers: { authorization: basic('bob', PASSWORD) }, body: { name: 'stolen' } }),
      403,
    ],
    [
      "makes alice's email his primary",
      (t, bob, o) => t.as(bob).send('POST', `/api/v1/user/settings/account/email?_method=PRIMARY&id=${o.emailId}`),
      404,
    ],
    [
      "deletes alice's email by id",
      (t, bob, o) => t.as(bob).send('POST', `/api/v1/user/settings/account/email/delete?id=${o.emailId}`),
      404,
    ],
    ["deletes alice's security key", (t, bob, o) => t.as(bob).delete(`${SECURITY}/webauthn/keys/${o.keyId}`), 404],
    ["revokes alice's session", (t, bob, o) => t.as(bob).delete(`${SECURITY}/sessions/${o.sid}/revoke`), 404],
    ["reads alice's OAuth2 application", (t, bob, o) => t.as(bob).get(`/api/v1/user/settings/applications/oauth2/${o.appId}`), 404],
    [
      "updates alice's OAuth2 application",
      (t, bob, o) => {
        const form = new FormData()
        form.append('name', 'hijacked')
        form.append('redirect_uris', 'https://evil.example.com/cb')
        return t.as(bob).send('PUT', `/api/v1/user/settings/applications/oauth2/${o.appId}`, form)
      },
      404,
    ],
    ["unlinks alice's external account", (t, bob, o) => t.as(bob).send('POST', `${SECURITY}/account_link`, { id: o.linkSource }), 404],
  ]

  for (const [what, call, expected] of cases) {
    test(`bob ${what} → ${expected}; alice's objects unchanged`, async () => {
      const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
      const [alice, bob] = await t.users('alice', 'bob')
      const o = await aliceObjects(t, alice)
      const res = await call(t, bob, o)
      expect(res.status).toBe(expected)
      expect(Object.keys(await res.json())).toEqual(expect.arrayContaining(['message', 'url']))
      await expectAliceIntact(t, alice, o)
    })
  }

  test("bob deletes records with his id and alice's → counts only his; alice's token still authenticates", async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice, bob] = await t.users('alice', 'bob')
    const o = await aliceObjects(t, alice)
    const his = await (await t.as(bob).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'his' })).json()
    const res = await t
      .as(bob)
      .send('POST', '/api/v1/user/settings/tokens/access-tokens/delete-records', { ids: [his.id, o.tokenId, o.basicTokenId] })
    expect(res.status).toBe(200)
    expect((await res.json()).message).toContain('1')
    await expectAliceIntact(t, alice, o)
  })
})
