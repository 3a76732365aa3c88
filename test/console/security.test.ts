import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { PASSWORD } from '../support/app'
import { addVirtualAuthenticator } from '../support/virtual-authenticator'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

const SECURITY = '/api/v1/user/settings/security'

describe('/user/settings/security in Chromium', () => {
  test('"Enable two-factor authentication" shows the QR code and the secret; a code from it confirms, and the scratch code shows once', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login?redirect_to=%2Fuser%2Fsettings%2Fsecurity')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/user/settings/security', 'Security')
      await page.locator('aria/Enable two-factor authentication[role="button"]').click()
      // Chromium's accessibility tree calls role="img" "image".
      await page.locator('aria/QR code of the new secret[role="image"]').wait()
      expect(await page.$eval('.qr svg', (svg) => svg.querySelectorAll('path').length)).toBeGreaterThan(0)
      const secret = await page.evaluate(() => document.querySelector('main p code')!.textContent!)
      expect(secret).toMatch(/^[A-Z2-7]{32}$/)
      await expectClean(page, 'security-enroll')
      await page.locator('aria/Authentication code[role="textbox"]').fill(await generate({ secret }))
      await page.locator('aria/Confirm[role="button"]').click()
      await page.waitForFunction(() => /^[a-z0-9]{10}$/.test(document.querySelector('.notice code')?.textContent ?? ''), {
        timeout: 20_000,
      })
      expect(await (await t.as(alice!).get(`${SECURITY}/`)).json()).toMatchObject({ twofaEnrolled: true, scratchTokenSet: true })
      await expectClean(page, 'security-enrolled')
    })
  }, 90_000)

  test('"Key name" and "Add security key" with Chromium\'s virtual authenticator → the key is listed; "Delete" removes it', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login?redirect_to=%2Fuser%2Fsettings%2Fsecurity')
      await addVirtualAuthenticator(page)
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/user/settings/security', 'Security')
      await page.locator('aria/Key name[role="textbox"]').fill('laptop')
      await page.locator('aria/Add security key[role="button"]').click()
      await page.locator('aria/Delete laptop[role="button"]').wait()
      const keys = (await (await t.as(alice!).get(`${SECURITY}/webauthn/keys`)).json()) as { name: string }[]
      expect(keys.map((k) => k.name)).toEqual(['laptop'])
      await expectClean(page, 'security-key')
      await page.locator('aria/Delete laptop[role="button"]').click()
      await page.waitForFunction(() => !document.querySelector('main')!.textContent!.includes('laptop'), { timeout: 20_000 })
      expect(await (await t.as(alice!).get(`${SECURITY}/webauthn/keys`)).json()).toEqual([])
    })
  }, 90_000)

  test('sessions: the other browser\'s "Sign out" ends that session only', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const other = await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })
      const otherCookie = other.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ')
      expect((await t.request('GET', '/api/v1/user', { headers: { cookie: otherCookie } })).status).toBe(200)
      const page = await open('/login?redirect_to=%2Fuser%2Fsettings%2Fsecurity')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/user/settings/security', 'Security')
      await page.waitForFunction(() => document.querySelectorAll('.sessions li').length === 2, { timeout: 20_000 })
      await expectClean(page, 'security-sessions')
      let clicked = 0
      for (const row of await page.$$('.sessions li')) {
        if (await row.evaluate((li) => li.textContent!.includes('This browser'))) continue
        await (await row.$('button'))!.click()
        clicked++
      }
      expect(clicked).toBe(1)
      await page.waitForFunction(() => document.querySelectorAll('.sessions li').length === 1, { timeout: 20_000 })
      expect((await t.request('GET', '/api/v1/user', { headers: { cookie: otherCookie } })).status).toBe(401)
      expect(await page.evaluate(async () => (await fetch('/api/v1/user')).status)).toBe(200)
    })
  }, 90_000)
})
