import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { Messages } from '../../src/identity/signin/service'
import { makeOrg } from '../orgs/support'
import { enrollTotp } from '../security/second-factor'
import { PASSWORD } from '../support/app'
import { startOidcProvider } from '../support/oidc-provider'
import { nextCode } from '../support/totp'
import { addVirtualAuthenticator } from '../support/virtual-authenticator'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** What the page says went wrong: the message beside a field, else the one at the top. */
async function shownError(page: Page): Promise<string> {
  await page.waitForFunction(() => Boolean(document.querySelector('.field-error, [role="alert"]:not(:empty)')), { timeout: 20_000 })
  return page.evaluate(() => document.querySelector('.field-error, [role="alert"]:not(:empty)')!.textContent ?? '')
}

describe('/login in Chromium', () => {
  test('a signed-out visit to /?view=all → /login?redirect_to=…; the password signs in and comes back there, signed in', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await open('/?view=all')
      await expectAt(page, origin, '/login?redirect_to=%2F%3Fview%3Dall', 'Sign in')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/?view=all', 'Clusters')
      await page.waitForFunction(() => document.querySelector('.account')?.textContent?.includes('alice'), { timeout: 20_000 })
      await expectClean(page, 'home')
    })
  }, 60_000)

  test('a wrong password → the reason beside the field, in words, still on /login; no JSON on the page', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await open('/login')
      await passwordStep(page, 'alice', 'not the password')
      expect(await shownError(page)).toBe('Username or password is incorrect')
      expect(page.url()).toBe(`${origin}/login`)
      expect(await page.evaluate(() => document.body.textContent)).not.toContain('{')
      expect(await page.$eval('#password', (input) => input.getAttribute('aria-invalid'))).toBe('true')
      await expectClean(page, 'login-wrong-password')
    })
  }, 60_000)

  test('redirect_to naming another site → after signing in, / of this site', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await open('/login?redirect_to=https%3A%2F%2Fevil.example%2F')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
    })
  }, 60_000)

  test('an account with TOTP: password, then "Authentication code" → signed in at redirect_to; a wrong code is said on the page', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const { secret } = await enrollTotp(t, alice!)
      const page = await open('/login?redirect_to=%2F')
      await passwordStep(page, 'alice', PASSWORD)
      const code = page.locator('aria/Authentication code[role="textbox"]')
      await code.fill('000000')
      await page.locator('aria/Verify code[role="button"]').click()
      expect(await shownError(page)).not.toBe('')
      await expectClean(page, 'login-second-factor')
      await code.fill(await nextCode(secret))
      await page.locator('aria/Verify code[role="button"]').click()
      await expectAt(page, origin, '/', 'Clusters')
    })
  }, 60_000)

  test('an account with a security key: password, then "Use a security key" with Chromium\'s virtual authenticator → signed in', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login')
      await addVirtualAuthenticator(page)
      // The key is registered over the API with a token, as a script would; the sign-in is the page's.
      const registered = await page.evaluate(async (token: string) => {
        const headers = { authorization: `token ${token}`, 'content-type': 'application/json' }
        const base = '/api/v1/user/settings/security/webauthn'
        const options = await fetch(`${base}/request_register`, { method: 'POST', headers, body: JSON.stringify({ name: 'key' }) })
        const { publicKey } = await options.json()
        const created = (await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(publicKey),
        })) as PublicKeyCredential
        return (await fetch(`${base}/register`, { method: 'POST', headers, body: JSON.stringify(created.toJSON()) })).status
      }, alice!.token)
      expect(registered).toBe(201)
      await passwordStep(page, 'alice', PASSWORD)
      await page.locator('aria/Use a security key[role="button"]').click()
      await expectAt(page, origin, '/', 'Clusters')
      const me = await page.evaluate(async () => (await fetch('/api/v1/user')).json())
      expect(me.login).toBe('alice')
    })
  }, 60_000)

  test('the password step of a second-factor account says nothing of the API: the 405 message never shows', async () => {
    await withConsole(async ({ t, open }) => {
      const [alice] = await t.users('alice')
      await enrollTotp(t, alice!)
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await page.locator('aria/Authentication code[role="textbox"]').wait()
      expect(await page.evaluate(() => document.body.textContent)).not.toContain(Messages.twoFactor)
    })
  }, 60_000)

  test('/login?org=acme → "Sign in with acme" goes through the org\'s OpenID provider and lands signed in at redirect_to', async () => {
    await withConsole(
      async ({ t, origin, open }) => {
        const [olga] = await t.users('olga')
        const { org } = await makeOrg(t, 'acme', { owner: olga! })
        const idp = await startOidcProvider([`${origin}/api/v1/user/oauth2/org-${org.id}`])
        const source = await t.as(olga!).send('POST', '/api/v1/orgs/acme/auth-source', {
          name: 'Acme Login',
          provider: 'openidConnect',
          clientID: idp.clientId,
          clientSecret: idp.clientSecret,
          discoveryURL: `${idp.issuer}/.well-known/openid-configuration`,
        })
        expect(source.status).toBe(201)
        idp.signInAs({ sub: 'mia-1', email: 'mia@acme.example', email_verified: true, preferred_username: 'mia' })
        const page = await open('/login?org=acme&redirect_to=%2F%3Ffrom%3Dsso')
        await page.locator('aria/Sign in with acme[role="button"]').wait()
        await expectClean(page, 'login-sso')
        await page.locator('aria/Sign in with acme[role="button"]').click()
        await expectAt(page, origin, '/?from=sso', 'Clusters')
        await page.waitForFunction(() => document.querySelector('.account')?.textContent?.includes('mia'), { timeout: 20_000 })
      },
      { PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' },
    )
  }, 90_000)
})
