import { describe, expect, test } from 'bun:test'
import { orgAuthSources } from '../../db/schema'
import { Messages as LinkMessages } from '../../src/identity/security/account-links/service'
import { Messages as SignInMessages } from '../../src/identity/signin/service'
import { Messages as SourceMessages } from '../../src/orgs/auth-source/service'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { CookieJar, type OidcAccount, type OidcProviderHandle, startOidcProvider, throughProvider } from '../support/oidc-provider'
import { makeOrg } from './support'

// In-process requests reach the app at the default public URL, which is also what the provider redirects to.
const PUBLIC = 'http://localhost:3000'

interface Lab {
  t: TestApp
  olga: TestUser
  orgId: number
  idp: OidcProviderHandle
}

/** An app, org `acme` owned by olga, a provider that knows the org's callback, and the source created through the API. */
async function lab(options: { enforce?: boolean; org?: string } = {}): Promise<Lab> {
  const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  const [olga] = await t.users('olga')
  const { org } = await makeOrg(t, options.org ?? 'acme', { owner: olga! })
  const idp = await startOidcProvider([`${PUBLIC}/api/v1/user/oauth2/org-${org.id}`])
  const res = await t.as(olga!).send('POST', `/api/v1/orgs/${org.name}/auth-source`, {
    name: 'Acme Login',
    provider: 'openidConnect',
    clientID: idp.clientId,
    clientSecret: idp.clientSecret,
    discoveryURL: `${idp.issuer}/.well-known/openid-configuration`,
    enforceForMembers: options.enforce ?? false,
  })
  if (res.status !== 201) throw new Error(`creating the source: ${res.status} ${await res.text()}`)
  return { t, olga: olga!, orgId: org.id, idp }
}

/** Olga pauses the org's source (isActive false, the rest as created). */
async function pauseSource(l: Lab) {
  await l.t.as(l.olga).send('PUT', '/api/v1/orgs/acme/auth-source', {
    name: 'Acme Login',
    provider: 'openidConnect',
    clientID: l.idp.clientId,
    isActive: false,
  })
}

/** A browser signing in through the org's source: start, the provider's login as `account`, the callback. */
async function ssoSignIn(
  lab: Lab,
  account: OidcAccount,
  jar = new CookieJar(),
  start = '',
): Promise<{ callback: Response; jar: CookieJar; callbackUrl: string }> {
  lab.idp.signInAs(account)
  const first = await lab.t.request('GET', `/api/v1/user/oauth2/org-${lab.orgId}${start}`, { headers: { cookie: jar.header() } })
  expect(first.status).toBe(302)
  jar.store(first)
  const callbackUrl = await throughProvider(first.headers.get('location')!, PUBLIC)
  const callback = await lab.t.request('GET', callbackUrl.slice(PUBLIC.length), { headers: { cookie: jar.header() } })
  jar.store(callback)
  return { callback, jar, callbackUrl }
}

/** A source body with placeholder client credentials (a request the test expects refused, or a second source). */
const placeholderSource = (fields: Record<string, string>) => ({
  name: 'x',
  provider: 'openidConnect',
  clientID: 'c',
  clientSecret: 's',
  ...fields,
})

const me = async (t: TestApp, jar: CookieJar) => (await t.request('GET', '/api/v1/user', { headers: { cookie: jar.header() } })).json()
const alice: OidcAccount = {
  sub: 'alice-sub',
  email: 'alice@corp.example',
  email_verified: true,
  preferred_username: 'alice',
  name: 'Alice A',
}

describe('auth source CRUD', () => {
  test('create → 201 with isActive true and no secret; a second one → 409', async () => {
    const { t, olga, idp } = await lab()
    const read = await (await t.as(olga).get('/api/v1/orgs/acme/auth-source')).json()
    expect(read).toMatchObject({
      name: 'Acme Login',
      provider: 'openidConnect',
      clientID: idp.clientId,
      isActive: true,
      enforceForMembers: false,
    })
    expect(JSON.stringify(read)).not.toContain(idp.clientSecret)
    const again = await t.as(olga).send('POST', '/api/v1/orgs/acme/auth-source', placeholderSource({ discoveryURL: idp.issuer }))
    expect(again.status).toBe(409)
  })

  test('the client secret is sealed at rest and kept by an update that omits it', async () => {
    const { t, olga, idp } = await lab()
    const put = await t.as(olga).send('PUT', '/api/v1/orgs/acme/auth-source', {
      name: 'Renamed',
      provider: 'openidConnect',
      clientID: idp.clientId,
      clientSecret: '',
    })
    expect(put.status).toBe(200)
    expect((await put.json()).name).toBe('Renamed')
    const row = await t.deps.db.read.query.orgAuthSources.findFirst()
    expect(row!.sealedClientSecret).not.toContain(idp.clientSecret)
    expect(await t.deps.secrets.open(row!.sealedClientSecret)).toBe(idp.clientSecret)
  })

  test('a discovery URL that is not an OpenID configuration → 422, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga! })
    const notOidc = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ hello: 'world' }) })
    const res = await t
      .as(olga!)
      .send('POST', '/api/v1/orgs/acme/auth-source', placeholderSource({ discoveryURL: `http://127.0.0.1:${notOidc.port}` }))
    notOidc.stop(true)
    expect(res.status).toBe(422)
    expect((await t.as(olga!).get('/api/v1/orgs/acme/auth-source')).status).toBe(404)
  })

  test('a discovery URL on a private address without PLATFORM_ALLOW_PRIVATE_ENDPOINTS → 422', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga! })
    const res = await t.as(olga!).send('POST', '/api/v1/orgs/acme/auth-source', placeholderSource({ discoveryURL: 'https://127.0.0.1:9/' }))
    expect(res.status).toBe(422)
  })

  test('openidConnect without a discovery URL and an unknown provider → 422', async () => {
    const { t, olga } = await lab({ org: 'other' })
    await makeOrg(t, 'acme', { owner: olga })
    const missing = await t.as(olga).send('POST', '/api/v1/orgs/acme/auth-source', placeholderSource({}))
    expect(missing.status).toBe(422)
    expect((await missing.json()).message).toBe(SourceMessages.discoveryNeeded('openidConnect'))
    const unknown = await t
      .as(olga)
      .send('POST', '/api/v1/orgs/acme/auth-source', placeholderSource({ provider: 'myspace', discoveryURL: 'https://8.8.8.8' }))
    expect(unknown.status).toBe(422)
  })

  test('a plain member may not read the source (403); delete → 204 then 404', async () => {
    const { t, olga } = await lab()
    const [mia] = await t.users('mia')
    await makeOrg(t, 'beta', { owner: olga, members: [mia!] })
    expect((await t.as(mia!).get('/api/v1/orgs/beta/auth-source')).status).toBe(403)
    expect((await t.as(olga).delete('/api/v1/orgs/acme/auth-source')).status).toBe(204)
    expect((await t.as(olga).get('/api/v1/orgs/acme/auth-source')).status).toBe(404)
    expect((await t.as(olga).delete('/api/v1/orgs/acme/auth-source')).status).toBe(404)
  })
})

describe('signing in through the org source (real OpenID provider, PKCE)', () => {
  test('the start redirects to the provider with PKCE S256, state and nonce', async () => {
    const l = await lab()
    const res = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    expect(res.status).toBe(302)
    const target = new URL(res.headers.get('location')!)
    expect(target.origin).toBe(l.idp.issuer)
    expect(target.searchParams.get('code_challenge_method')).toBe('S256')
    for (const p of ['code_challenge', 'state', 'nonce']) expect(target.searchParams.get(p)).toBeTruthy()
    expect(res.headers.getSetCookie().join()).toContain('platform_sso_state=')
  })

  test('first sign-in creates the user, makes them a member (team Members, read) and starts a session', async () => {
    const l = await lab()
    const { callback, jar } = await ssoSignIn(l, alice)
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${PUBLIC}/`)
    const user = await me(l.t, jar)
    expect(user).toMatchObject({ login: 'alice', full_name: 'Alice A' })
    const teams = (await (await l.t.as(l.olga).get('/api/v1/orgs/acme/teams')).json()) as { name: string; permission: string; id: number }[]
    const members = teams.find((team) => team.name === 'Members')!
    expect(members.permission).toBe('read')
    const list = (await (await l.t.as(l.olga).get(`/api/v1/teams/${members.id}/members`)).json()) as { login: string }[]
    expect(list.map((m) => m.login)).toEqual(['alice'])
  })

  test('the second sign-in reuses the same user', async () => {
    const l = await lab()
    const first = await me(l.t, (await ssoSignIn(l, alice)).jar)
    const second = await me(l.t, (await ssoSignIn(l, alice)).jar)
    expect(second.id).toBe(first.id)
    expect(await l.t.deps.db.read.query.users.findMany({ where: (u, { eq }) => eq(u.lowerName, 'alice-2') })).toEqual([])
  })

  test('an existing account with the same email is not joined by email: a new user is made', async () => {
    const l = await lab()
    const res = await l.t.as(await l.t.admin()).send('POST', '/api/v1/admin/users', {
      username: 'alice',
      email: 'alice@corp.example',
      password: 'a long enough password 1',
      must_change_password: false,
    })
    expect(res.status).toBe(201)
    const signedIn = await me(l.t, (await ssoSignIn(l, alice)).jar)
    expect(signedIn.login).toBe('alice-2')
    const links = await l.t.deps.db.read.query.externalLoginUsers.findMany()
    expect(links.map((link) => link.uid)).toEqual([signedIn.id])
  })

  test('a second provider asserting the same email and subject does not take over the account', async () => {
    const l = await lab()
    const first = await me(l.t, (await ssoSignIn(l, alice)).jar)
    // Another org, another provider (another issuer), the same claims: its own, new user.
    const { org } = await makeOrg(l.t, 'evil', { owner: l.olga })
    const evil = await startOidcProvider([`${PUBLIC}/api/v1/user/oauth2/org-${org.id}`])
    await l.t.as(l.olga).send('POST', '/api/v1/orgs/evil/auth-source', {
      name: 'Evil',
      provider: 'openidConnect',
      clientID: evil.clientId,
      clientSecret: evil.clientSecret,
      discoveryURL: evil.issuer,
    })
    const second = await me(l.t, (await ssoSignIn({ ...l, orgId: org.id, idp: evil }, alice)).jar)
    expect(second.id).not.toBe(first.id)
  })

  test('pointing the source at another provider does not sign its subjects into existing links', async () => {
    const l = await lab()
    const first = await me(l.t, (await ssoSignIn(l, alice)).jar)
    const other = await startOidcProvider([`${PUBLIC}/api/v1/user/oauth2/org-${l.orgId}`])
    await l.t.as(l.olga).send('PUT', '/api/v1/orgs/acme/auth-source', {
      name: 'Acme Login',
      provider: 'openidConnect',
      clientID: other.clientId,
      clientSecret: other.clientSecret,
      discoveryURL: other.issuer,
    })
    const second = await me(l.t, (await ssoSignIn({ ...l, idp: other }, alice)).jar)
    expect(second.id).not.toBe(first.id)
  })

  test('a signed-in user who starts the flow gets the identity linked to their account', async () => {
    const l = await lab()
    const jar = new CookieJar()
    const signIn = await l.t.request('POST', '/api/v1/user/signin', { body: { username: 'olga', password: PASSWORD } })
    jar.store(signIn)
    const { callback } = await ssoSignIn(l, { sub: 'olga-at-idp', preferred_username: 'olga.corp' }, jar)
    expect(callback.status).toBe(302)
    const links = await (await l.t.as(l.olga).get('/api/v1/user/settings/security/account_link')).json()
    expect(links).toMatchObject([{ id: l.orgId, provider: 'openidConnect', name: 'Acme Login', externalID: 'olga-at-idp' }])
  })

  test('redirect_to lands on a path of this site; another origin is ignored', async () => {
    const l = await lab()
    expect((await ssoSignIn(l, alice, new CookieJar(), '?redirect_to=/console/clusters')).callback.headers.get('location')).toBe(
      `${PUBLIC}/console/clusters`,
    )
    expect((await ssoSignIn(l, alice, new CookieJar(), '?redirect_to=//evil.example/x')).callback.headers.get('location')).toBe(
      `${PUBLIC}/`,
    )
  })

  test('a callback without the state cookie (another browser) → 400, no session', async () => {
    const l = await lab()
    l.idp.signInAs(alice)
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    const callbackUrl = await throughProvider(first.headers.get('location')!, PUBLIC)
    const res = await l.t.request('GET', callbackUrl.slice(PUBLIC.length))
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(SourceMessages.stateMissing)
    expect(res.headers.getSetCookie().join()).not.toContain('platform_session=')
  })

  test('a tampered state parameter → 400, and no user is created', async () => {
    const l = await lab()
    l.idp.signInAs(alice)
    const jar = new CookieJar()
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    jar.store(first)
    const callbackUrl = new URL(await throughProvider(first.headers.get('location')!, PUBLIC))
    callbackUrl.searchParams.set('state', 'forged-state')
    const res = await l.t.request('GET', `${callbackUrl.pathname}${callbackUrl.search}`, { headers: { cookie: jar.header() } })
    expect(res.status).toBe(400)
    expect(await l.t.deps.db.read.query.users.findFirst({ where: (u, { eq }) => eq(u.lowerName, 'alice') })).toBeUndefined()
  })

  test('an ID token carrying another nonce (the authorization request was altered) → 400 naming the ID token', async () => {
    const l = await lab()
    l.idp.signInAs(alice)
    const jar = new CookieJar()
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    jar.store(first)
    const authorization = new URL(first.headers.get('location')!)
    authorization.searchParams.set('nonce', 'attacker-chosen-nonce')
    const callbackUrl = await throughProvider(authorization.href, PUBLIC)
    const res = await l.t.request('GET', callbackUrl.slice(PUBLIC.length), { headers: { cookie: jar.header() } })
    expect(res.status).toBe(400)
    expect((await res.json()).message).toContain('ID token')
    expect(res.headers.getSetCookie().join()).not.toContain('platform_session=')
  })

  test('a tampered state cookie → 400', async () => {
    const l = await lab()
    l.idp.signInAs(alice)
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    const callbackUrl = await throughProvider(first.headers.get('location')!, PUBLIC)
    const jar = new CookieJar()
    jar.store(first)
    jar.set('platform_sso_state', `${jar.get('platform_sso_state')!.slice(0, -4)}AAAA`)
    expect((await l.t.request('GET', callbackUrl.slice(PUBLIC.length), { headers: { cookie: jar.header() } })).status).toBe(400)
  })

  test("a replayed code (same callback, same state cookie) → 400 from the provider's refusal", async () => {
    const l = await lab()
    l.idp.signInAs(alice)
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    const stateCookie = new CookieJar()
    stateCookie.store(first)
    const callbackUrl = (await throughProvider(first.headers.get('location')!, PUBLIC)).slice(PUBLIC.length)
    expect((await l.t.request('GET', callbackUrl, { headers: { cookie: stateCookie.header() } })).status).toBe(302)
    const replay = await l.t.request('GET', callbackUrl, { headers: { cookie: stateCookie.header() } })
    expect(replay.status).toBe(400)
    expect((await replay.json()).message).toContain('invalid_grant')
  })

  test("the provider's error answer → 400 naming it", async () => {
    const l = await lab()
    const first = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    const jar = new CookieJar()
    jar.store(first)
    const state = new URL(first.headers.get('location')!).searchParams.get('state')!
    const res = await l.t.request(
      'GET',
      `/api/v1/user/oauth2/org-${l.orgId}?error=access_denied&state=${state}&iss=${encodeURIComponent(l.idp.issuer)}`,
      { headers: { cookie: jar.header() } },
    )
    expect(res.status).toBe(400)
    expect((await res.json()).message).toContain('access_denied')
  })

  test('a paused (inactive) source and an org without one → 404 at the start', async () => {
    const l = await lab()
    await pauseSource(l)
    expect((await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)).status).toBe(404)
    expect((await l.t.request('GET', '/api/v1/user/oauth2/org-999999')).status).toBe(404)
    expect((await l.t.request('GET', '/api/v1/user/oauth2/github')).status).toBe(404)
  })

  test('an unreachable provider → 502 naming it, not a 500', async () => {
    const l = await lab()
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    // The provider goes away after the source was saved.
    await l.t.deps.db.write(async (tx) => tx.update(orgAuthSources).set({ discoveryUrl: `http://127.0.0.1:${closed.port}` }))
    closed.stop(true)
    const res = await l.t.request('GET', `/api/v1/user/oauth2/org-${l.orgId}`)
    expect(res.status).toBe(502)
    expect((await res.json()).message).toContain('could not be reached')
  })
})

describe('enforcement and linked accounts', () => {
  test("enforceForMembers: a member's password sign-in and Basic password → 403; tokens still work; site admins exempt", async () => {
    const l = await lab({ enforce: true })
    const [mia] = await l.t.users('mia')
    await l.t.as(l.olga).send('POST', '/api/v1/orgs/acme/teams', { name: 'Members', permission: 'read' })
    const teams = (await (await l.t.as(l.olga).get('/api/v1/orgs/acme/teams')).json()) as { id: number; name: string }[]
    await l.t.as(l.olga).send('PUT', `/api/v1/teams/${teams.find((t) => t.name === 'Members')!.id}/members/mia`)
    const signIn = await l.t.request('POST', '/api/v1/user/signin', { body: { username: 'mia', password: PASSWORD } })
    expect(signIn.status).toBe(403)
    expect((await signIn.json()).message).toBe(SignInMessages.ssoRequired('acme', 'Acme Login'))
    expect((await l.t.request('GET', '/api/v1/user', { headers: { authorization: basic('mia', PASSWORD) } })).status).toBe(403)
    expect((await l.t.as(mia!).get('/api/v1/user')).status).toBe(200)
    const root = await l.t.admin()
    await l.t.as(l.olga).send('PUT', `/api/v1/teams/${teams.find((t) => t.name === 'Members')!.id}/members/root`)
    expect((await l.t.request('POST', '/api/v1/user/signin', { body: { username: root.name, password: PASSWORD } })).status).toBe(200)
  })

  test('deleting the source restores password sign-in', async () => {
    const l = await lab({ enforce: true })
    // olga is the owner: a member, so enforcement applies to her too.
    expect((await l.t.request('POST', '/api/v1/user/signin', { body: { username: 'olga', password: PASSWORD } })).status).toBe(403)
    await l.t.as(l.olga).delete('/api/v1/orgs/acme/auth-source')
    expect((await l.t.request('POST', '/api/v1/user/signin', { body: { username: 'olga', password: PASSWORD } })).status).toBe(200)
  })

  test('an SSO-only user cannot unlink their only way in (422)', async () => {
    const l = await lab()
    const { jar } = await ssoSignIn(l, alice)
    const csrf = jar.get('_csrf')!
    const res = await l.t.request('POST', '/api/v1/user/settings/security/account_link', {
      body: { id: l.orgId },
      headers: { cookie: jar.header(), 'x-csrf-token': csrf },
    })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(LinkMessages.onlySignIn)
  })
})

describe('GET /user/login-method', () => {
  const ask = async (t: TestApp, query: string) => (await t.request('GET', `/api/v1/user/login-method${query}`)).json()
  test('neither orgname nor username → 400', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/api/v1/user/login-method')).status).toBe(400)
  })
  test("orgname of an org with an active source → sso with the source's fields", async () => {
    const l = await lab()
    expect(await ask(l.t, '?orgname=acme')).toEqual({
      method: 'sso',
      orgAuthSourceID: l.orgId,
      providerName: 'openidConnect',
      oauthCallbackPath: `/user/oauth2/org-${l.orgId}`,
      displayName: 'Acme Login',
    })
  })
  test('orgname of an org whose source is inactive → password', async () => {
    const l = await lab()
    await pauseSource(l)
    expect(await ask(l.t, '?orgname=acme')).toEqual({ method: 'password' })
  })
  test('orgname of an org without a source, or unknown → password', async () => {
    const l = await lab()
    await makeOrg(l.t, 'plain', { owner: l.olga })
    expect(await ask(l.t, '?orgname=plain')).toEqual({ method: 'password' })
    expect(await ask(l.t, '?orgname=nope')).toEqual({ method: 'password' })
  })
  test('username of a member of an org that does not enforce → password', async () => {
    const l = await lab()
    expect(await ask(l.t, '?username=olga')).toEqual({ method: 'password' })
  })
  test('username (login or email) of a member of an enforcing org → sso', async () => {
    const l = await lab({ enforce: true })
    expect((await ask(l.t, '?username=olga')).method).toBe('sso')
    expect((await ask(l.t, '?username=OLGA@example.com')).method).toBe('sso')
  })
  test('username of a site admin in an enforcing org → password', async () => {
    const l = await lab({ enforce: true })
    const root = await l.t.admin()
    const teams = (await (await l.t.as(l.olga).get('/api/v1/orgs/acme/teams')).json()) as { id: number }[]
    await l.t.as(l.olga).send('PUT', `/api/v1/teams/${teams[0]!.id}/members/${root.name}`)
    expect(await ask(l.t, `?username=${root.name}`)).toEqual({ method: 'password' })
  })
  test('unknown username → password (no account is revealed)', async () => {
    const l = await lab({ enforce: true })
    expect(await ask(l.t, '?username=nobody')).toEqual({ method: 'password' })
  })
})
