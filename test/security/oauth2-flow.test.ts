import { describe, expect, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { oauth2AuthorizationCodes, oauth2Grants } from '../../db/schema'
import { Messages as AuthzMessages, CODE_TTL_SECONDS } from '../../src/identity/oauth2/authorization'
import { startSession } from '../../src/identity/sessions/service'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'

const REDIRECT = 'https://client.example/callback'
const insecure = { [oauth.allowInsecureRequests]: true }

/** A signed-in browser of `who`: session cookie plus CSRF header. */
async function browserOf(t: TestApp, who: TestUser) {
  const started = await startSession(t.deps.db, who.user, { ip: '', userAgent: 'test', remember: false }, t.clock.seconds())
  return { cookie: `platform_session=${started.secret}; _csrf=${started.csrfToken}`, 'x-csrf-token': started.csrfToken }
}

async function registerClient(t: TestApp, who: TestUser, confidential: boolean) {
  const res = await t.as(who).send('POST', '/api/v1/user/settings/applications/oauth2', {
    name: 'client',
    redirect_uris: [REDIRECT],
    confidential_client: confidential,
  })
  return (await res.json()) as { id: number; client_id: string; client_secret: string }
}

/** What a user's browser does between the client's redirect and the callback: look, approve, follow. */
async function approve(t: TestApp, headers: Record<string, string>, authorizationUrl: URL, granted = true): Promise<URL> {
  const look = await t.request('GET', authorizationUrl.pathname + authorizationUrl.search, { headers })
  expect(look.status).toBe(200)
  const body = { ...Object.fromEntries(authorizationUrl.searchParams), granted }
  const answer = await t.request('POST', '/login/oauth/grant', { headers, body })
  expect(answer.status).toBe(302)
  return new URL(answer.headers.get('location')!)
}

function authorizationUrl(clientId: string, extra: Record<string, string>) {
  const url = new URL('http://localhost/login/oauth/authorize')
  url.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, ...extra }).toString()
  return url
}

/** Runs the code flow with PKCE up to the token endpoint answer. */
async function codeFor(t: TestApp, who: TestUser, clientId: string, scope = 'read:user') {
  const verifier = oauth.generateRandomCodeVerifier()
  const url = authorizationUrl(clientId, {
    scope,
    state: 'st-1',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })
  const callback = await approve(t, await browserOf(t, who), url)
  return { verifier, callback, code: callback.searchParams.get('code')! }
}

const tokenForm = (t: TestApp, fields: Record<string, string>, auth?: string) =>
  t.request('POST', '/login/oauth/access_token', {
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
  })

/** The code exchange's fields with the client's credentials in the body (client_secret_post). */
const clientSecretPost = (code: string, verifier: string, client: { client_id: string; client_secret: string }) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT,
  code_verifier: verifier,
  client_id: client.client_id,
  client_secret: client.client_secret,
})

/** Alice's confidential client, her approval of `scope`, and the tokens its code bought (client_secret_basic). */
async function issuedTokens(scope: string) {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const registered = await registerClient(t, alice!, true)
  const { verifier, code } = await codeFor(t, alice!, registered.client_id, scope)
  const auth = basic(registered.client_id, registered.client_secret)
  const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
  return { t, auth, tokens: await (await tokenForm(t, fields, auth)).json() }
}

describe('OAuth2 authorization-code flow with oauth4webapi', () => {
  /** Alice's confidential client on a real port, up to the callback of her approval (state, PKCE verifier, consent kept). */
  async function confidentialClientApproved() {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const base = await t.listen()
    const registered = await registerClient(t, alice!, true)
    const as: oauth.AuthorizationServer = {
      issuer: base,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
    }
    const client: oauth.Client = { client_id: registered.client_id }
    const clientAuth = oauth.ClientSecretBasic(registered.client_secret)
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: 'read:user',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const headers = await browserOf(t, alice!)
    const consent = await (await t.request('GET', url.pathname + url.search, { headers })).json()
    const callback = await approve(t, headers, url)
    /** The code exchange (client_secret_basic) as oauth4webapi sends it. */
    const exchange = () =>
      oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        oauth.validateAuthResponse(as, client, callback, state),
        REDIRECT,
        verifier,
        insecure,
      )
    const callApi = (accessToken: string) =>
      oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${base}/api/v1/user`), undefined, undefined, insecure)
    const refresh = (refreshToken: string) => oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, insecure)
    return { t, as, client, state, consent, callback, exchange, callApi, refresh }
  }

  /** The flow through the token endpoint: the tokens oauth4webapi accepted. */
  async function confidentialClientTokens() {
    const flow = await confidentialClientApproved()
    const tokens = await oauth.processAuthorizationCodeResponse(flow.as, flow.client, await flow.exchange())
    return { ...flow, tokens }
  }

  test('a confidential client: the consent names the application, scopes and state; approving redirects to the callback', async () => {
    const { client, state, consent, callback } = await confidentialClientApproved()
    expect(consent).toEqual({ application: 'client', client_id: client.client_id, redirect_uri: REDIRECT, scopes: ['read:user'], state })
    expect(callback.origin + callback.pathname).toBe(REDIRECT)
  })

  test('a confidential client exchanges the code (client_secret_basic) → bearer tokens for the scope, one hour, not cached', async () => {
    const { as, client, exchange } = await confidentialClientApproved()
    const response = await exchange()
    expect(response.headers.get('cache-control')).toBe('no-store')
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.scope).toBe('read:user')
    expect(tokens.expires_in).toBe(3600)
  })

  test('the access token calls the API as the user', async () => {
    const { tokens, callApi } = await confidentialClientTokens()
    const me = await callApi(tokens.access_token)
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('alice')
  })

  test('a refresh rotates: the new access token works; the old access token and refresh token are dead', async () => {
    const { t, as, client, tokens, callApi, refresh } = await confidentialClientTokens()
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!))
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect((await callApi(refreshed.access_token)).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    const reused = await refresh(tokens.refresh_token!)
    expect(reused.status).toBe(400)
    expect((await reused.json()).error).toBe('invalid_grant')
  })

  test('a replaced refresh token presented again revokes the grant: the current access and refresh tokens die too', async () => {
    const { t, as, client, tokens, refresh } = await confidentialClientTokens()
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!))
    await (await refresh(tokens.refresh_token!)).body?.cancel()
    // One of the two holders is a thief: the grant goes.
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(401)
    expect((await refresh(refreshed.refresh_token!)).status).toBe(400)
  })

  test('a public client with PKCE and no client secret (oauth4webapi None) → tokens', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const base = await t.listen()
    const registered = await registerClient(t, alice, false)
    const as: oauth.AuthorizationServer = {
      issuer: base,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
    }
    const client: oauth.Client = { client_id: registered.client_id }
    const { verifier, callback } = await codeFor(t, alice, client.client_id)
    const params = oauth.validateAuthResponse(as, client, callback, 'st-1')
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    )
    expect(tokens.access_token).toStartWith('poa_')
  })

  test('tokens, codes and secrets are stored only as hashes and never logged', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const { verifier, code } = await codeFor(t, alice, registered.client_id)
    const res = await tokenForm(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(registered.client_id, registered.client_secret),
    )
    const tokens = await res.json()
    const stored = JSON.stringify([
      await t.deps.db.read.select().from(oauth2Grants),
      await t.deps.db.read.select().from(oauth2AuthorizationCodes),
    ])
    for (const secret of [code, tokens.access_token, tokens.refresh_token]) {
      expect(stored).not.toContain(secret)
      expect(t.logs.join('\n')).not.toContain(secret)
    }
  })
})

describe('OAuth2 scopes of issued tokens', () => {
  test('a read:user token reads /user → 200 but may not write user settings → 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const { verifier, code } = await codeFor(t, alice, registered.client_id, 'read:user')
    const tokens = await (await tokenForm(t, clientSecretPost(code, verifier, registered))).json()
    const bearer = { authorization: `Bearer ${tokens.access_token}` }
    expect((await t.request('GET', '/api/v1/user', { headers: bearer })).status).toBe(200)
    const write = await t.request('POST', '/api/v1/user/settings/applications/oauth2', {
      headers: bearer,
      body: { name: 'x', redirect_uris: [REDIRECT] },
    })
    expect(write.status).toBe(403)
  })

  test('a token without user scope → 403 on /user', async () => {
    const { t, tokens } = await issuedTokens('read:organization')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: `token ${tokens.access_token}` } })).status).toBe(403)
  })

  test('an expired or made-up access token → 401', async () => {
    const { t, tokens } = await issuedTokens('read:user')
    t.clock.advance((tokens.expires_in + 1) * 1000)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: 'Bearer poa_madeup' } })).status).toBe(401)
  })

  test('refresh may narrow scopes but not widen them → 400 invalid_scope', async () => {
    const { t, auth, tokens } = await issuedTokens('read:user read:organization')
    const wider = await tokenForm(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'write:user' }, auth)
    expect(wider.status).toBe(400)
    expect((await wider.json()).error).toBe('invalid_scope')
    const narrower = await tokenForm(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'read:user' }, auth)
    expect(narrower.status).toBe(200)
    expect((await narrower.json()).scope).toBe('read:user')
  })
})

describe('OAuth2 authorization endpoint refusals', () => {
  test('anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const url = authorizationUrl(registered.client_id, {})
    expect((await t.request('GET', url.pathname + url.search)).status).toBe(401)
  })

  test('an unknown client_id → 400 shown to the user, no redirect', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const url = authorizationUrl('00000000-0000-0000-0000-000000000000', {})
    const res = await t.request('GET', url.pathname + url.search, { headers: await browserOf(t, alice) })
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(AuthzMessages.unknownClient)
  })

  test.each([
    'https://client.example/callback/',
    'https://client.example/callback?x=1',
    'https://CLIENT.example/callback',
    'https://evil.example/callback',
  ])('a redirect_uri not registered exactly (%s) → 400, no redirect, no code', async (redirectUri) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const headers = await browserOf(t, alice)
    const url = authorizationUrl(registered.client_id, { redirect_uri: redirectUri })
    const res = await t.request('GET', url.pathname + url.search, { headers })
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(AuthzMessages.redirectMismatch)
    const grant = await t.request('POST', '/login/oauth/grant', {
      headers,
      body: { ...Object.fromEntries(url.searchParams), granted: true },
    })
    expect(grant.status).toBe(400)
    expect(await t.deps.db.read.select().from(oauth2AuthorizationCodes)).toEqual([])
  })

  test.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'write:everything' }, 'invalid_scope'],
    ['code_challenge_method=plain', { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
  ])('%s → 302 back to the client with the error and state', async (_what, extra, error) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const url = authorizationUrl(registered.client_id, { state: 's1', ...extra })
    const res = await t.request('GET', url.pathname + url.search, { headers: await browserOf(t, alice) })
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('state')).toBe('s1')
  })

  test('a public client without PKCE → 302 invalid_request, no code issued', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, false)
    const headers = await browserOf(t, alice)
    const url = authorizationUrl(registered.client_id, {})
    const res = await t.request('POST', '/login/oauth/grant', { headers, body: { ...Object.fromEntries(url.searchParams), granted: true } })
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')
    expect(await t.deps.db.read.select().from(oauth2AuthorizationCodes)).toEqual([])
  })

  test('a grant asked with Accept: application/json → 200 and the same location in the body (for a page that navigates itself)', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const headers = { ...(await browserOf(t, alice)), accept: 'application/json' }
    const url = authorizationUrl(registered.client_id, { state: 'st-json' })
    const res = await t.request('POST', '/login/oauth/grant', { headers, body: { ...Object.fromEntries(url.searchParams), granted: true } })
    expect(res.status).toBe(200)
    expect(res.headers.get('location')).toBeNull()
    const location = new URL((await res.json()).location)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('state')).toBe('st-json')
    expect(location.searchParams.get('code')).toMatch(/\S{20,}/)
  })

  test('the user refuses → 302 access_denied, no code', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const callback = await approve(t, await browserOf(t, alice), authorizationUrl(registered.client_id, { state: 's' }), false)
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('code')).toBeNull()
  })

  test('a grant from a cookie session without the CSRF header → 403, no code', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const { cookie } = await browserOf(t, alice)
    const url = authorizationUrl(registered.client_id, {})
    const res = await t.request('POST', '/login/oauth/grant', {
      headers: { cookie },
      body: { ...Object.fromEntries(url.searchParams), granted: true },
    })
    expect(res.status).toBe(403)
    expect(await t.deps.db.read.select().from(oauth2AuthorizationCodes)).toEqual([])
  })

  test('a grant by an access token instead of the user → 403 (consent needs a session or password)', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const url = authorizationUrl(registered.client_id, {})
    const res = await t.as(alice).send('POST', '/login/oauth/grant', { ...Object.fromEntries(url.searchParams), granted: true })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.interactiveOnly)
    const byPassword = await t.request('POST', '/login/oauth/grant', {
      headers: { authorization: basic('alice', PASSWORD) },
      body: { ...Object.fromEntries(url.searchParams), granted: true },
    })
    expect(byPassword.status).toBe(302)
  })

  test('a grant body missing fields → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.request('POST', '/login/oauth/grant', { headers: await browserOf(t, alice), body: { granted: true } })).status).toBe(
      422,
    )
  })
})

describe('OAuth2 token endpoint refusals', () => {
  async function setup(confidential = true) {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, confidential)
    const flow = await codeFor(t, alice, registered.client_id)
    const auth = basic(registered.client_id, registered.client_secret)
    return { t, alice, registered, ...flow, auth }
  }

  test('a replayed code → 400 invalid_grant, and the tokens it issued are revoked', async () => {
    const { t, code, verifier, auth } = await setup()
    const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
    const first = await tokenForm(t, fields, auth)
    expect(first.status).toBe(200)
    const tokens = await first.json()
    const again = await tokenForm(t, fields, auth)
    expect(again.status).toBe(400)
    expect((await again.json()).error).toBe('invalid_grant')
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
  })

  test('two parallel exchanges of one code → exactly one 200', async () => {
    const { t, code, verifier, auth } = await setup()
    const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
    const statuses = (await Promise.all([tokenForm(t, fields, auth), tokenForm(t, fields, auth)])).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 400])
  })

  test('an expired code → 400 invalid_grant', async () => {
    const { t, code, verifier, auth } = await setup()
    t.clock.advance((CODE_TTL_SECONDS + 1) * 1000)
    const res = await tokenForm(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, auth)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
  })

  test.each([
    ['a wrong code_verifier', { code_verifier: 'x'.repeat(43) }],
    ['no code_verifier', { code_verifier: undefined }],
    ['another redirect_uri', { redirect_uri: 'https://client.example/other' }],
  ])('%s → 400 invalid_grant, no tokens', async (_what, change) => {
    const { t, code, verifier, auth } = await setup()
    const fields: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
    for (const [k, v] of Object.entries(change))
      if (v === undefined) delete fields[k]
      else fields[k] = v
    const res = await tokenForm(t, fields, auth)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
    expect(await t.deps.db.read.select().from(oauth2Grants)).toEqual([])
  })

  test('a wrong client secret → 401 invalid_client with WWW-Authenticate; no secret at all → 401', async () => {
    const { t, code, verifier, registered } = await setup()
    const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }
    const res = await tokenForm(t, fields, basic(registered.client_id, 'pos_wrong'))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('Basic')
    expect((await res.json()).error).toBe('invalid_client')
    expect((await tokenForm(t, { ...fields, client_id: registered.client_id })).status).toBe(401)
  })

  test('a code issued to another client → 400 invalid_grant', async () => {
    const { t, alice, code, verifier } = await setup()
    const other = await registerClient(t, alice, true)
    const res = await tokenForm(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(other.client_id, other.client_secret),
    )
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
  })

  test('an unknown grant_type → 400 unsupported_grant_type; missing code → 400 invalid_request', async () => {
    const { t, auth } = await setup()
    expect((await (await tokenForm(t, { grant_type: 'password' }, auth)).json()).error).toBe('unsupported_grant_type')
    const missing = await tokenForm(t, { grant_type: 'authorization_code' }, auth)
    expect(missing.status).toBe(400)
    expect((await missing.json()).error).toBe('invalid_request')
  })

  test('an unknown refresh token → 400 invalid_grant', async () => {
    const { t, auth } = await setup()
    const res = await tokenForm(t, { grant_type: 'refresh_token', refresh_token: 'por_nope' }, auth)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
  })

  test('a code without PKCE whose application turned public meanwhile → 400 invalid_grant', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const registered = await registerClient(t, alice, true)
    const callback = await approve(t, await browserOf(t, alice), authorizationUrl(registered.client_id, {}))
    const update = new FormData()
    update.append('name', 'client')
    update.append('redirect_uris', REDIRECT)
    update.append('confidential_client', 'false')
    expect((await t.as(alice).send('PUT', `/api/v1/user/settings/applications/oauth2/${registered.id}`, update)).status).toBe(200)
    const res = await tokenForm(t, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: registered.client_id,
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
  })

  test('a code whose redirect URI was removed from the application meanwhile → 400 invalid_grant', async () => {
    const { t, alice, registered, code, verifier, auth } = await setup()
    const id = registered.id
    const update = new FormData()
    update.append('name', 'client')
    update.append('redirect_uris', 'https://client.example/new')
    expect((await t.as(alice).send('PUT', `/api/v1/user/settings/applications/oauth2/${id}`, update)).status).toBe(200)
    const res = await tokenForm(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, auth)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_grant')
  })

  test('the token endpoint accepts JSON bodies too', async () => {
    const { t, code, verifier, registered } = await setup()
    const res = await t.request('POST', '/login/oauth/access_token', {
      body: clientSecretPost(code, verifier, registered),
    })
    expect(res.status).toBe(200)
  })
})
