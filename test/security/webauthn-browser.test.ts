import { describe, expect, test } from 'bun:test'
import puppeteer, { type Page } from 'puppeteer-core'
import { CHROMIUM_FLAGS } from '../../src/usage/pdf/printer'
import { makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { freePort } from '../support/ports'
import { addVirtualAuthenticator } from '../support/virtual-authenticator'

const BASE = '/api/v1/user/settings/security/webauthn'

/**
 * An app on a real port whose public URL is the page's origin, alice, and a Chromium page of that
 * origin with a virtual security key (CTAP2, user presence answered at once).
 */
async function withBrowserKey(run: (lab: { t: TestApp; alice: TestUser; origin: string; page: Page }) => Promise<void>): Promise<void> {
  const port = freePort()
  const origin = `http://localhost:${port}`
  const t = await makeTestApp({ PLATFORM_PUBLIC_URL: origin, PORT: String(port) })
  const [alice] = await t.users('alice')
  const server = t.app.listen({ port, hostname: '127.0.0.1', reusePort: false })
  const browser = await puppeteer.launch({ executablePath: t.config.chromiumPath, headless: true, pipe: true, args: CHROMIUM_FLAGS })
  try {
    const page = await browser.newPage()
    // Any page of the origin will do: localhost is a secure context, so navigator.credentials works.
    await page.goto(`${origin}/healthz`)
    await addVirtualAuthenticator(page)
    await run({ t, alice: alice!, origin, page })
  } finally {
    await browser.close()
    await server.stop()
  }
}

describe('WebAuthn with a real browser', () => {
  test("Chromium's virtual authenticator registers a key → 201; it is listed, then deleted", async () => {
    await withBrowserKey(async ({ t, alice, origin, page }) => {
      const outcome = await page.evaluate(
        async (base: string, token: string) => {
          const headers = { authorization: `token ${token}`, 'content-type': 'application/json' }
          const optionsRes = await fetch(`${base}/request_register`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: 'browser key' }),
          })
          const { publicKey } = await optionsRes.json()
          const credential = (await navigator.credentials.create({
            publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey),
          })) as PublicKeyCredential
          const registerRes = await fetch(`${base}/register`, { method: 'POST', headers, body: JSON.stringify(credential.toJSON()) })
          return { options: optionsRes.status, status: registerRes.status, body: await registerRes.json(), id: credential.id }
        },
        `${origin}${BASE}`,
        alice.token,
      )

      expect(outcome.options).toBe(200)
      expect(outcome.status).toBe(201)
      expect(outcome.body).toMatchObject({ name: 'browser key' })
      const stored = await t.deps.db.read.query.webauthnCredentials.findFirst()
      expect(stored?.credentialId).toBe(outcome.id)

      const keys = await (await t.as(alice).get(`${BASE}/keys`)).json()
      expect(keys).toEqual([outcome.body])
      expect((await t.as(alice).delete(`${BASE}/keys/${outcome.body.id}`)).status).toBe(200)
      expect(await (await t.as(alice).get(`${BASE}/keys`)).json()).toEqual([])
    })
  }, 30_000)
})

describe('signing in with a security key in a real browser', () => {
  test("password → 405 with a ticket; Chromium's virtual authenticator answers the options → 200; the session cookie signs the page in", async () => {
    await withBrowserKey(async ({ t, alice, origin, page }) => {
      const outcome = await page.evaluate(
        async (base: string, token: string, password: string) => {
          const json = { 'content-type': 'application/json' }
          // Registration with a token, as a script would do it once.
          const registration = { authorization: `token ${token}`, ...json }
          const { publicKey: creation } = await (
            await fetch(`${base}/api/v1/user/settings/security/webauthn/request_register`, {
              method: 'POST',
              headers: registration,
              body: JSON.stringify({ name: 'browser key' }),
            })
          ).json()
          const created = (await navigator.credentials.create({
            publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(creation),
          })) as PublicKeyCredential
          await fetch(`${base}/api/v1/user/settings/security/webauthn/register`, {
            method: 'POST',
            headers: registration,
            body: JSON.stringify(created.toJSON()),
          })
          // Sign-in as a person would: password, then the key.
          const passwordStep = await fetch(`${base}/api/v1/user/signin`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ username: 'alice', password }),
          })
          const options = await fetch(`${base}/api/v1/user/signin/webauthn/options`, { method: 'POST' })
          const { publicKey } = await options.json()
          const assertion = (await navigator.credentials.get({
            publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey),
          })) as PublicKeyCredential
          const keyStep = await fetch(`${base}/api/v1/user/signin/webauthn`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify(assertion.toJSON()),
          })
          const me = await fetch(`${base}/api/v1/user`)
          return {
            password: passwordStep.status,
            options: options.status,
            key: keyStep.status,
            me: me.status,
            login: me.ok ? (await me.json()).login : undefined,
          }
        },
        origin,
        alice.token,
        PASSWORD,
      )
      expect(outcome).toEqual({ password: 405, options: 200, key: 200, me: 200, login: 'alice' })
      const stored = await t.deps.db.read.query.webauthnCredentials.findFirst()
      expect(stored?.signCount).toBeGreaterThan(0)
    })
  }, 30_000)
})
