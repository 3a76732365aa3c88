import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { Messages as EmailMessages } from '../../src/identity/emails/service'
import { Messages } from '../../src/identity/settings/service'
import { basic, PASSWORD, type TestApp, type TestUser } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** Signs `login` in through /login and lands on /user/settings. */
async function settingsOf(open: (path: string) => Promise<Page>, origin: string, login: string): Promise<Page> {
  const page = await open('/login?redirect_to=%2Fuser%2Fsettings')
  await passwordStep(page, login, PASSWORD)
  await expectAt(page, origin, '/user/settings', 'Settings')
  await page.waitForSelector('#full_name', { timeout: 20_000 })
  return page
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (node) => node.textContent)
const waitForText = (page: Page, selector: string, text: string) =>
  page.waitForFunction(
    (s: string, want: string) => document.querySelector(s)?.textContent?.includes(want),
    { timeout: 20_000 },
    selector,
    text,
  )
const profileOf = async (t: TestApp, who: TestUser) => (await t.as(who).get('/api/v1/user/settings/profile')).json()
const emailsOf = async (t: TestApp, who: TestUser) =>
  ((await (await t.as(who).get('/api/v1/user/emails')).json()) as { email: string; primary: boolean }[]).map(
    (e) => `${e.email}${e.primary ? ' (primary)' : ''}`,
  )

describe('/user/settings in Chromium', () => {
  test('"Full name", "Website" and "Keep my email address private" checked, "Save profile" → the profile changed; the nav\'s "Settings" leads here', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
      await page.locator('aria/Settings[role="link"]').click()
      await expectAt(page, origin, '/user/settings', 'Settings')
      await page.locator('aria/Full name[role="textbox"]').fill('Alice Liddell')
      await page.locator('aria/Website[role="textbox"]').fill('https://alice.example')
      expect(await page.$eval('input[name="keep_email_private"]', (box) => (box as HTMLInputElement).checked)).toBe(false)
      await page.locator('aria/Keep my email address private[role="checkbox"]').click()
      await page.locator('aria/Save profile[role="button"]').click()
      await waitForText(page, '.outcome', 'Profile saved.')
      expect(await profileOf(t, alice!)).toMatchObject({
        full_name: 'Alice Liddell',
        website: 'https://alice.example',
        keep_email_private: true,
      })
      await expectClean(page, 'settings')
      await page.reload({ waitUntil: 'networkidle0' })
      await page.waitForSelector('#full_name', { timeout: 20_000 })
      expect(await page.$eval('#full_name', (input) => (input as HTMLInputElement).value)).toBe('Alice Liddell')
    })
  }, 90_000)

  test('a website that is not an http(s) URL → the reason beside "Website", in words; the profile unchanged', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await settingsOf(open, origin, 'alice')
      await page.locator('aria/Full name[role="textbox"]').fill('Changed')
      await page.locator('aria/Website[role="textbox"]').fill('ftp://alice.example')
      await page.locator('aria/Save profile[role="button"]').click()
      await page.waitForSelector('#website-error', { timeout: 20_000 })
      expect(await textOf(page, '#website-error')).toBe('Website must be an http(s) URL')
      expect(Messages.websiteInvalid).toBe('website must be an http(s) URL')
      expect(await page.$eval('#website', (input) => input.getAttribute('aria-describedby'))).toBe('website-error')
      expect(await profileOf(t, alice!)).toMatchObject({ full_name: '', website: '' })
      await expectClean(page, 'settings-website-error')
    })
  }, 90_000)

  test('"Email address" and "Add email address", then "Make primary" and "Delete" of the old one → the API has the new primary alone; a taken address is refused beside the field', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice', 'bob')
      const page = await settingsOf(open, origin, 'alice')
      await page.locator('aria/Email address[role="textbox"]').fill('bob@example.com')
      await page.locator('aria/Add email address[role="button"]').click()
      await page.waitForSelector('#new-email-error', { timeout: 20_000 })
      expect(await textOf(page, '#new-email-error')).toBe(EmailMessages.emailUsed)
      expect(await emailsOf(t, alice!)).toEqual(['alice@example.com (primary)'])
      await expectClean(page, 'settings-email-taken')

      await page.locator('aria/Email address[role="textbox"]').fill('liddell@example.com')
      await page.locator('aria/Add email address[role="button"]').click()
      await waitForText(page, '.tokens', 'liddell@example.com')
      await page.locator('aria/Make primary liddell@example.com[role="button"]').click()
      await page.waitForFunction(() => !document.querySelector('.tokens')?.textContent?.includes('alice@example.com · primary'), {
        timeout: 20_000,
      })
      await page.locator('aria/Delete alice@example.com[role="button"]').click()
      await page.waitForFunction(() => !document.querySelector('.tokens')?.textContent?.includes('alice@example.com'), { timeout: 20_000 })
      expect(await emailsOf(t, alice!)).toEqual(['liddell@example.com (primary)'])
      // The primary address has no "Delete": it cannot be removed.
      expect(await page.$$eval('.tokens button', (buttons) => buttons.length)).toBe(0)
      await expectClean(page, 'settings-emails')
    })
  }, 90_000)

  test('a wrong "Current password" → the reason beside it and the password unchanged; the right one → "Password changed" and the new password signs in', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await settingsOf(open, origin, 'alice')
      const signsIn = (password: string) =>
        t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', password) } }).then((r) => r.status)
      await page.locator('aria/Current password').fill('not the password')
      await page.locator('aria/New password').fill('a new long password')
      await page.locator('aria/New password again').fill('a new long password')
      await page.locator('aria/Change password[role="button"]').click()
      await page.waitForSelector('#old_password-error', { timeout: 20_000 })
      expect(await textOf(page, '#old_password-error')).toBe('The current password is incorrect')
      expect(Messages.oldPasswordWrong).toBe('the current password is incorrect')
      expect(await signsIn(PASSWORD)).toBe(200)
      await expectClean(page, 'settings-password-wrong')

      await page.locator('aria/Current password').fill(PASSWORD)
      await page.locator('aria/New password').fill('a new long password')
      await page.locator('aria/New password again').fill('a new long password')
      await page.locator('aria/Change password[role="button"]').click()
      await waitForText(page, 'form[aria-labelledby="password-heading"] .outcome', 'Password changed.')
      expect(await page.$('#old_password-error')).toBeNull()
      expect(await signsIn('a new long password')).toBe(200)
      expect(await signsIn(PASSWORD)).toBe(401)
    })
  }, 90_000)
})
