import { describe, expect, test } from 'bun:test'
import { basic, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** An OAuth2 client's callback on a real port: it keeps the query of each call to /callback and answers a small page. */
function callbackServer() {
  const calls: URLSearchParams[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = new URL(request.url)
      if (url.pathname === '/callback') calls.push(url.searchParams)
      return new Response('<!doctype html><title>Client</title><p>Back at the client.</p>', { headers: { 'content-type': 'text/html' } })
    },
  })
  return { calls, redirectUri: `http://127.0.0.1:${server.port}/callback`, stop: () => server.stop(true) }
}

async function registerClient(t: TestApp, who: TestUser, redirectUri: string) {
  const res = await t.as(who).send('POST', '/api/v1/user/settings/applications/oauth2', {
    name: 'Deploy Bot',
    redirect_uris: [redirectUri],
    confidential_client: true,
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { client_id: string; client_secret: string }
}

const authorizePath = (clientId: string, redirectUri: string) =>
  `/login/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st-42', scope: 'read:user' })}`

describe('/login/oauth/authorize in Chromium', () => {
  test('signed out → /login and back → the consent page names the application, its host and scopes; "Authorize" → the callback gets a code that buys a token', async () => {
    const client = callbackServer()
    try {
      await withConsole(async ({ t, origin, open }) => {
        const [alice] = await t.users('alice')
        const app = await registerClient(t, alice!, client.redirectUri)
        const authorize = authorizePath(app.client_id, client.redirectUri)
        const page = await open(authorize)
        await expectAt(page, origin, `/login?redirect_to=${encodeURIComponent(authorize)}`, 'Sign in')
        await passwordStep(page, 'alice', PASSWORD)
        await expectAt(page, origin, authorize, 'Authorize Deploy Bot')
        const text = await page.evaluate(() => document.querySelector('main')!.textContent)
        expect(text).toContain(new URL(client.redirectUri).host)
        expect(text).toContain('read:user')
        await expectClean(page, 'consent')
        await page.locator('aria/Authorize[role="button"]').click()
        await page.waitForFunction(() => document.title === 'Client', { timeout: 20_000 })
        const answer = client.calls.at(-1)!
        expect(answer.get('state')).toBe('st-42')
        const code = answer.get('code')!
        const tokens = await t.request('POST', '/login/oauth/access_token', {
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.client_id, app.client_secret) },
        })
        expect(tokens.status).toBe(200)
        const me = await t.request('GET', '/api/v1/user', { headers: { authorization: `bearer ${(await tokens.json()).access_token}` } })
        expect((await me.json()).login).toBe('alice')
      })
    } finally {
      client.stop()
    }
  }, 90_000)

  test('"Cancel" → the callback gets access_denied and no code', async () => {
    const client = callbackServer()
    try {
      await withConsole(async ({ t, origin, open }) => {
        const [alice] = await t.users('alice')
        const app = await registerClient(t, alice!, client.redirectUri)
        const page = await open('/login')
        await passwordStep(page, 'alice', PASSWORD)
        await expectAt(page, origin, '/', 'Clusters')
        await page.goto(`${origin}${authorizePath(app.client_id, client.redirectUri)}`)
        await page.locator('aria/Cancel[role="button"]').click()
        await page.waitForFunction(() => document.title === 'Client', { timeout: 20_000 })
        expect(client.calls.at(-1)!.get('error')).toBe('access_denied')
        expect(client.calls.at(-1)!.get('code')).toBeNull()
      })
    } finally {
      client.stop()
    }
  }, 90_000)

  test('a faulty request (unknown scope) from a signed-in browser → straight to the client with the error, no page', async () => {
    const client = callbackServer()
    try {
      await withConsole(async ({ t, origin }) => {
        const [alice] = await t.users('alice')
        const app = await registerClient(t, alice!, client.redirectUri)
        const signIn = await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })
        const cookie = signIn.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; ')
        const path = authorizePath(app.client_id, client.redirectUri).replace('read%3Auser', 'fly')
        const res = await fetch(`${origin}${path}`, { headers: { accept: 'text/html', cookie }, redirect: 'manual' })
        expect(res.status).toBe(302)
        expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope')
      })
    } finally {
      client.stop()
    }
  }, 60_000)

  test('API clients keep the JSON answer: without a credential 401, with the password the consent as JSON', async () => {
    await withConsole(async ({ t, origin }) => {
      const [alice] = await t.users('alice')
      const app = await registerClient(t, alice!, 'https://client.example/callback')
      const path = authorizePath(app.client_id, 'https://client.example/callback')
      const anonymous = await fetch(`${origin}${path}`, { headers: { accept: 'application/json' }, redirect: 'manual' })
      expect(anonymous.status).toBe(401)
      const res = await fetch(`${origin}${path}`, { headers: { authorization: basic('alice', PASSWORD) } })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ application: 'Deploy Bot', scopes: ['read:user'], state: 'st-42' })
    })
  }, 60_000)
})
