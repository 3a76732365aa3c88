import { describe, expect, test } from 'bun:test'
import { PASSWORD } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

describe('/user/settings/tokens in Chromium', () => {
  test('"Token name" and a scope, "Generate token" → the value shown once and copied; it calls the API with that scope; "Delete" removes it', async () => {
    await withConsole(async ({ t, origin, browser, open }) => {
      const [alice] = await t.users('alice')
      await browser.defaultBrowserContext().overridePermissions(origin, ['clipboard-read', 'clipboard-sanitized-write'])
      const page = await open('/login?redirect_to=%2Fuser%2Fsettings%2Ftokens')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/user/settings/tokens', 'Access tokens')
      await page.locator('aria/Token name[role="textbox"]').fill('deploy')
      await page.locator('aria/read:cluster[role="checkbox"]').click()
      await page.locator('aria/Generate token[role="button"]').click()
      await page.waitForFunction(() => /^[0-9a-f]{40}$/.test(document.querySelector('.secret code')?.textContent ?? ''), {
        timeout: 20_000,
      })
      const value = await page.$eval('.secret code', (code) => code.textContent!)
      await page.locator('aria/Copy token[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent === 'Copied.', { timeout: 20_000 })
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value)
      await expectClean(page, 'tokens')

      expect((await t.request('GET', '/api/v1/clustersv2/alice', { token: value })).status).toBe(200)
      expect((await t.request('GET', '/api/v1/user', { token: value })).status).toBe(403)
      // After a reload the list names it, without its value.
      await page.reload({ waitUntil: 'networkidle0' })
      await page.waitForFunction(() => document.querySelector('.tokens')?.textContent?.includes('deploy'), { timeout: 20_000 })
      expect(await page.evaluate(() => document.body.textContent)).not.toContain(value)
      await page.locator('aria/Delete deploy[role="button"]').click()
      await page.waitForFunction(() => !document.querySelector('.tokens')?.textContent?.includes('deploy'), { timeout: 20_000 })
      expect((await t.request('GET', '/api/v1/clustersv2/alice', { token: value })).status).toBe(401)
      expect((await t.as(alice!).get('/api/v1/user')).status).toBe(200)
    })
  }, 90_000)

  test('a duplicate name → the reason beside "Token name", in words; no token made', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login?redirect_to=%2Fuser%2Fsettings%2Ftokens')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/user/settings/tokens', 'Access tokens')
      // makeTestApp gave alice a token named "test".
      await page.locator('aria/Token name[role="textbox"]').fill('test')
      await page.locator('aria/Generate token[role="button"]').click()
      await page.waitForFunction(() => Boolean(document.querySelector('#name-error')), { timeout: 20_000 })
      expect(await page.$eval('#name-error', (node) => node.textContent)).toBe('Is already used by another token')
      expect(await page.$eval('#name', (input) => input.getAttribute('aria-describedby'))).toBe('name-error')
      expect(await page.$('.secret')).toBeNull()
      const names = ((await (await t.as(alice!).get('/api/v1/user/settings/tokens/access-tokens/')).json()) as { name: string }[]).map(
        (k) => k.name,
      )
      expect(names).toEqual(['test'])
      await expectClean(page, 'tokens-duplicate')
    })
  }, 90_000)
})
