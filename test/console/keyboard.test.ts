import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { PASSWORD } from '../support/app'
import { expectAt, withConsole } from './support'

// docs/decisions.md §11: every page usable by keyboard. These flows use Tab, typing and Enter only: no click.

/** The accessible name of the focused element, as a screen reader would read it (its label, aria-label or text). */
const focusedName = (page: Page) =>
  page.evaluate(() => {
    const focused = document.activeElement as HTMLElement | null
    if (!focused || focused === document.body) return ''
    const label = (focused as HTMLInputElement).labels?.[0]?.textContent ?? focused.getAttribute('aria-label') ?? focused.textContent
    return (label ?? '').trim()
  })

/** Presses Tab until the control named `name` has the focus; fails when 60 presses never reach it. */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let presses = 0; presses < 60; presses++) {
    if ((await focusedName(page)) === name) return
    await page.keyboard.press('Tab')
  }
  throw new Error(`Tab never reached "${name}"`)
}

describe('the console by keyboard alone', () => {
  test('sign in, go to Tokens through the navigation and generate a token: Tab, typing and Enter only', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await open('/login')
      await tabTo(page, 'Username or email')
      await page.keyboard.type('alice')
      await tabTo(page, 'Password')
      await page.keyboard.type(PASSWORD)
      await page.keyboard.press('Enter')
      await expectAt(page, origin, '/', 'Clusters')

      await tabTo(page, 'Tokens')
      await page.keyboard.press('Enter')
      await expectAt(page, origin, '/user/settings/tokens', 'Access tokens')
      await tabTo(page, 'Token name')
      await page.keyboard.type('by-keyboard')
      await tabTo(page, 'Generate token')
      await page.keyboard.press('Enter')
      await page.waitForFunction(() => /^[0-9a-f]{40}$/.test(document.querySelector('.secret code')?.textContent ?? ''), {
        timeout: 20_000,
      })
      const value = await page.$eval('.secret code', (code) => code.textContent!)
      expect((await t.request('GET', '/api/v1/user', { token: value })).status).toBe(200)
    })
  }, 90_000)
})
