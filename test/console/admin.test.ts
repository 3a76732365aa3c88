import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { Messages as AuditMessages } from '../../src/audit/service'
import { Messages as IdentityMessages } from '../../src/identity/service'
import { Messages as SignInMessages } from '../../src/identity/signin/service'
import { deadRegistrationFixture } from '../clusters/support'
import { PASSWORD } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** The cells of the table `selector`, row by row. */
const rowsOf = (page: Page, selector: string) =>
  page.evaluate(
    (table: string) =>
      [...document.querySelectorAll(`${table} tbody tr`)].map((row) => [...row.querySelectorAll('td')].map((c) => c.textContent ?? '')),
    selector,
  )

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

type Row = string[]

/**
 * Waits until the audit table shows `expected` (each row without its time; none: the page says nothing matches),
 * then compares, so a table that never changes fails with the difference.
 */
async function expectAuditRows(page: Page, expected: Row[]) {
  const shown = (want: string) => {
    const rows = [...document.querySelectorAll('table.audit tbody tr')]
    const cells = rows.map((row) => [...row.querySelectorAll('td')].slice(1).map((cell) => cell.textContent))
    return want === '[]' ? document.body.textContent?.includes('No events match.') === true : JSON.stringify(cells) === want
  }
  await page.waitForFunction(shown, { timeout: 20_000 }, JSON.stringify(expected)).catch(() => undefined)
  expect((await rowsOf(page, 'table.audit')).map((row) => row.slice(1))).toEqual(expected)
}

describe('/admin in Chromium', () => {
  test('a site admin creates a user and disables them → the list says Disabled, and their sign-in on /login fails with the reason in words', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.admin()
      const page = await open('/login?redirect_to=%2Fadmin')
      await passwordStep(page, 'root', PASSWORD)
      await expectAt(page, origin, '/admin', 'Administration')
      await page.waitForFunction(() => document.querySelector('table.users tbody')?.textContent?.includes('root'), {
        timeout: 20_000,
      })
      expect(await page.$$eval('nav[aria-label="Main"] a', (links) => links.map((a) => a.textContent))).toContain('Admin')
      await page.locator('aria/Username[role="textbox"]').fill('dave')
      await page.locator('aria/Email[role="textbox"]').fill('dave@example.com')
      await page.locator('aria/Password').fill('a long passphrase')
      await page.locator('aria/Create user[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent === 'User dave created.', { timeout: 20_000 })
      await page.waitForFunction(() => document.querySelector('table.users tbody')?.textContent?.includes('dave'), {
        timeout: 20_000,
      })
      expect(await rowsOf(page, 'table.users')).toEqual([
        ['dave', 'dave@example.com', 'Enabled', 'Disable dave'],
        ['root', 'root@example.com', 'Enabled, site administrator', ''],
      ])
      await page.locator('aria/Disable dave[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('table.users tbody tr td:nth-child(3)')?.textContent === 'Disabled', {
        timeout: 20_000,
      })
      expect((await rowsOf(page, 'table.users'))[0]).toEqual(['dave', 'dave@example.com', 'Disabled', 'Enable dave'])
      await expectClean(page, 'admin')

      const signIn = await open('/login')
      await passwordStep(signIn, 'dave', 'a long passphrase')
      await signIn.waitForFunction(
        (text: string) => document.querySelector('[role="alert"]')?.textContent === text,
        { timeout: 20_000 },
        SignInMessages.prohibited,
      )
      expect(signIn.url()).toBe(`${origin}/login`)
      await expectClean(signIn, 'admin-disabled-sign-in')
    })
  }, 90_000)

  test('"Create user" with a short password → the reason beside "Password", in words; no user made', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const admin = await t.admin()
      const page = await open('/login?redirect_to=%2Fadmin')
      await passwordStep(page, 'root', PASSWORD)
      await expectAt(page, origin, '/admin', 'Administration')
      await page.locator('aria/Username[role="textbox"]').fill('dave')
      await page.locator('aria/Email[role="textbox"]').fill('dave@example.com')
      await page.locator('aria/Password').fill('short')
      await page.locator('aria/Create user[role="button"]').click()
      await page.waitForFunction(() => Boolean(document.querySelector('#password-error')), { timeout: 20_000 })
      expect(await page.$eval('#password-error', (node) => node.textContent)).toBe(sentence(IdentityMessages.passwordTooShort))
      expect(await page.$eval('#password', (input) => input.getAttribute('aria-describedby'))).toBe('password-error')
      expect((await t.as(admin).get('/api/v1/users/dave')).status).toBe(404)
      await expectClean(page, 'admin-create-refused')
    })
  }, 60_000)

  test('22 accounts → 20 on the first page; "Next page" shows the other 2, "Previous page" comes back', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.admin()
      await t.users(...Array.from({ length: 21 }, (_, i) => `user${String(i).padStart(2, '0')}`))
      const page = await open('/login?redirect_to=%2Fadmin')
      await passwordStep(page, 'root', PASSWORD)
      await expectAt(page, origin, '/admin', 'Administration')
      const firstColumn = async () => (await rowsOf(page, 'table.users')).map((row) => row[0])
      const pageShows = (first: string) =>
        page.waitForFunction(
          (name: string) => document.querySelector('table.users tbody td')?.textContent === name,
          { timeout: 20_000 },
          first,
        )
      await pageShows('root')
      expect(await firstColumn()).toEqual(['root', ...Array.from({ length: 19 }, (_, i) => `user${String(i).padStart(2, '0')}`)])
      const usersPager = 'nav[aria-label="Users pages"]'
      expect(await page.$eval(`${usersPager} span`, (s) => s.textContent)).toBe('Page 1 of 2 (22 in all)')
      // The users' pager comes before the audit trail's: the first button of each name is the users'.
      await page.locator('aria/Next page[role="button"]').click()
      await pageShows('user19')
      expect(await firstColumn()).toEqual(['user19', 'user20'])
      await page.locator('aria/Previous page[role="button"]').click()
      await pageShows('root')
    })
  }, 90_000)

  test('the audit filters (actor, kind, cluster, result, time) narrow the table to the events the test caused', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const admin = await t.admin()
      const [alice] = await t.users('alice')
      await deadRegistrationFixture(t, alice!.user, 'dev')
      // What the filters should find: alice renames her cluster (allowed), tries to disable root (refused), and a
      // wrong password is tried for her (a refused sign-in); the admin's own sign-in below is one more event.
      expect((await t.as(alice!).send('PATCH', '/api/v1/clustersv2/alice/dev', { displayName: 'Development' })).status).toBe(200)
      expect((await t.as(alice!).send('PATCH', '/api/v1/admin/users/root', { prohibit_login: true })).status).toBe(403)
      expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: 'wrong password' } })).status).toBe(422)
      expect((await t.as(admin).get('/api/v1/user')).status).toBe(200)

      const page = await open('/login?redirect_to=%2Fadmin')
      await passwordStep(page, 'root', PASSWORD)
      await expectAt(page, origin, '/admin', 'Administration')
      const rootSignIn = ['signin', 'root', 'password sign-in as root', '–', 'allowed (200)']
      const aliceWrongPassword = ['signin', 'anonymous', 'password sign-in as alice', '–', 'refused (422)']
      const aliceRefused = ['api', 'alice', 'PATCH /api/v1/admin/users/{username}', '–', 'refused (403)']
      const aliceRename = ['api', 'alice', 'PATCH /api/v1/clustersv2/{owner}/{cluster}', 'alice/dev', 'allowed (200)']
      await expectAuditRows(page, [rootSignIn, aliceWrongPassword, aliceRefused, aliceRename])

      const filter = () => page.locator('aria/Filter[role="button"]').click()
      await page.locator('aria/Actor[role="textbox"]').fill('alice')
      await filter()
      await expectAuditRows(page, [aliceRefused, aliceRename])
      await page.select('#result', 'refused')
      await filter()
      await expectAuditRows(page, [aliceRefused])

      await page.locator('aria/Actor[role="textbox"]').fill('')
      await page.select('#result', '')
      await page.locator('aria/Cluster (owner/name)[role="textbox"]').fill('alice/dev')
      await filter()
      await expectAuditRows(page, [aliceRename])

      await page.locator('aria/Cluster (owner/name)[role="textbox"]').fill('')
      await page.select('#kind', 'signin')
      await filter()
      await expectAuditRows(page, [rootSignIn, aliceWrongPassword])
      await expectClean(page, 'admin-audit')

      // From an hour ahead: nothing yet; until then: both sign-ins.
      const later = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
      await page.locator('aria/From[role="textbox"]').fill(later)
      await filter()
      await expectAuditRows(page, [])
      await page.locator('aria/From[role="textbox"]').fill('')
      await page.locator('aria/Until[role="textbox"]').fill(later)
      await filter()
      await expectAuditRows(page, [rootSignIn, aliceWrongPassword])

      // A time that is no RFC 3339 instant: the API's reason beside "From", in words.
      await page.locator('aria/From[role="textbox"]').fill('yesterday')
      await filter()
      await page.waitForFunction(() => Boolean(document.querySelector('#since-error')), { timeout: 20_000 })
      expect(await page.$eval('#since-error', (node) => node.textContent)).toBe(sentence(AuditMessages.badTime))
      expect(await page.$eval('#since', (input) => input.getAttribute('aria-describedby'))).toBe('time-hint since-error')
    })
  }, 90_000)

  test('signed out → sign in and back; a user who is no site admin → a plain sentence, no admin content, and no Admin link', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      // Signed out, the page sends the browser to sign in and back.
      const page = await open('/admin')
      await page.waitForFunction(() => location.pathname === '/login', { timeout: 20_000 })
      expect(page.url()).toBe(`${origin}/login?redirect_to=%2Fadmin`)
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/admin', 'Administration')
      await page.waitForFunction(() => document.querySelector('main p')?.textContent === 'Only site administrators can use this page.', {
        timeout: 20_000,
      })
      expect(await page.$('table')).toBeNull()
      expect(await page.$('form')).toBeNull()
      expect(await page.$$eval('nav[aria-label="Main"] a', (links) => links.map((a) => a.textContent))).not.toContain('Admin')
      await expectClean(page, 'admin-refused')
    })
  }, 60_000)
})
