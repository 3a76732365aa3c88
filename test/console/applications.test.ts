import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { sha256Hex } from '../../src/identity/tokens/secrets'
import { PASSWORD, type TestApp, type TestUser } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

const PAGE = '/user/settings/applications'
const API = '/api/v1/user/settings/applications/oauth2'

async function applicationsOf(open: (path: string) => Promise<Page>, origin: string): Promise<Page> {
  const page = await open(`/login?redirect_to=${encodeURIComponent(PAGE)}`)
  await passwordStep(page, 'alice', PASSWORD)
  await expectAt(page, origin, PAGE, 'OAuth2 applications')
  return page
}

const listed = async (t: TestApp, who: TestUser) =>
  (await (await t.as(who).get(API)).json()) as {
    id: number
    name: string
    client_id: string
    redirect_uris: string[]
    confidential_client: boolean
  }[]
const secretHashes = async (t: TestApp) => (await t.deps.db.read.query.oauth2Applications.findMany()).map((row) => row.clientSecretHash)
/** The client secret the page shows once, when it is there. */
async function shownSecret(page: Page): Promise<string> {
  await page.waitForFunction(() => /^pos_/.test(document.querySelector('.secret code')?.textContent ?? ''), { timeout: 20_000 })
  return page.$eval('.secret code', (code) => code.textContent!)
}

describe('/user/settings/applications in Chromium', () => {
  test('"Application name" and "Redirect URIs", "Register application" → the client id and secret shown once and copied; the API has the application', async () => {
    await withConsole(async ({ t, origin, browser, open }) => {
      const [alice] = await t.users('alice')
      await browser.defaultBrowserContext().overridePermissions(origin, ['clipboard-read', 'clipboard-sanitized-write'])
      const page = await applicationsOf(open, origin)
      await page.locator('aria/Application name[role="textbox"]').fill('ci dashboard')
      await page.locator('aria/Redirect URIs (one per line)').fill('https://ci.example/callback\nhttp://127.0.0.1:8080/cb')
      await page.locator('aria/Register application[role="button"]').click()
      const secret = await shownSecret(page)
      const [registered] = await listed(t, alice!)
      expect(registered).toMatchObject({
        name: 'ci dashboard',
        redirect_uris: ['https://ci.example/callback', 'http://127.0.0.1:8080/cb'],
        confidential_client: true,
      })
      expect(await secretHashes(t)).toEqual([sha256Hex(secret)])
      expect(await page.evaluate(() => document.querySelector('.notice')?.textContent)).toContain(registered!.client_id)
      await page.locator('aria/Copy client secret[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent === 'Copied.', { timeout: 20_000 })
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
      await expectClean(page, 'applications')
      await page.reload({ waitUntil: 'networkidle0' })
      await page.waitForFunction(() => document.querySelector('.applications')?.textContent?.includes('ci dashboard'), { timeout: 20_000 })
      expect(await page.evaluate(() => document.body.textContent)).not.toContain(secret)
    })
  }, 90_000)

  test('a javascript: redirect URI → the reason beside "Redirect URIs", in words; nothing registered', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await applicationsOf(open, origin)
      await page.locator('aria/Application name[role="textbox"]').fill('evil')
      await page.locator('aria/Redirect URIs (one per line)').fill('javascript:alert(1)')
      await page.locator('aria/Register application[role="button"]').click()
      await page.waitForSelector('#redirect_uris-error', { timeout: 20_000 })
      expect(await page.$eval('#redirect_uris-error', (node) => node.textContent)).toBe('"javascript:" is not a redirect scheme')
      expect(await page.$eval('#redirect_uris', (input) => input.getAttribute('aria-describedby'))).toBe('redirect_uris-error')
      expect(await page.$('.secret')).toBeNull()
      expect(await listed(t, alice!)).toEqual([])
      await expectClean(page, 'applications-bad-uri')
    })
  }, 90_000)

  test('"Edit", "Save changes" → renamed and public; "Regenerate secret" → a new secret shown once; "Delete" → gone', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const created = await (await t.as(alice!).send('POST', API, { name: 'ci', redirect_uris: ['https://ci.example/cb'] })).json()
      const page = await applicationsOf(open, origin)
      await page.locator('aria/Edit ci[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('#form-heading')?.textContent === 'Edit ci', { timeout: 20_000 })
      expect(await page.$eval('#redirect_uris', (area) => (area as HTMLTextAreaElement).value)).toBe('https://ci.example/cb')
      await page.locator('aria/Application name[role="textbox"]').fill('ci board')
      await page.locator('aria/Confidential client (a server that keeps the client secret; a public one must use PKCE)').click()
      await page.locator('aria/Save changes[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('.applications')?.textContent?.includes('ci board · public'), {
        timeout: 20_000,
      })
      expect(await listed(t, alice!)).toMatchObject([
        { name: 'ci board', redirect_uris: ['https://ci.example/cb'], confidential_client: false },
      ])

      await page.locator('aria/Regenerate secret ci board[role="button"]').click()
      const secret = await shownSecret(page)
      expect(secret).not.toBe(created.client_secret)
      expect(await secretHashes(t)).toEqual([sha256Hex(secret)])
      await expectClean(page, 'applications-regenerated')

      await page.locator('aria/Delete ci board[role="button"]').click()
      await page.waitForFunction(() => document.body.textContent?.includes('No applications yet.'), { timeout: 20_000 })
      expect(await listed(t, alice!)).toEqual([])
      expect((await t.as(alice!).get(`${API}/${created.id}`)).status).toBe(404)
    })
  }, 90_000)
})
