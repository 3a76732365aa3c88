import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { makeOrg } from '../orgs/support'
import { PASSWORD, tempDir } from '../support/app'
import { eventually } from '../support/wait'
import { HOUR, hourly, requests } from '../usage/support'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

const OCTOBER = Date.UTC(2025, 9, 1)
const database = { uid: 'pg-1', cluster: { uid: 'cl-1', name: 'prod-eu', mode: 'prod' } }

describe('/usage in Chromium', () => {
  test("a site admin's org with usage in October 2025 → the month with its products' figures, and its Download PDF link gives a PDF with the session", async () => {
    await withConsole(
      async ({ t, origin, browser, open }) => {
        const admin = await t.admin()
        await makeOrg(t, 'acme', { owner: admin })
        const events = hourly(database, OCTOBER, OCTOBER + 24 * HOUR, requests('2', '4Gi'))
        expect((await t.as(admin).send('POST', '/api/v1/usage/events?org=acme', events)).status).toBe(200)
        const summary = await t.as(admin).get('/api/v1/dashboard/monthly-summary/dbprod?org=acme&period_start=2025-10&period_end=2025-10')
        const [october] = ((await summary.json()) as { months: { cpuCoreMonth: number; memoryGiBMonth: number; instances: number }[] })
          .months
        expect(october!.instances).toBe(1)

        const page = await open('/login?redirect_to=%2Fusage')
        await passwordStep(page, 'root', PASSWORD)
        await expectAt(page, origin, '/usage', 'Usage')
        await page.waitForFunction(() => document.querySelector('h3')?.textContent === 'October 2025', { timeout: 30_000 })
        const rows = await page.evaluate(() =>
          [...document.querySelectorAll('table.usage tbody tr')].map((row) =>
            [...row.querySelectorAll('td')].map((cell) => cell.textContent),
          ),
        )
        expect(rows).toEqual([
          ['dbprod', october!.cpuCoreMonth.toFixed(2), october!.memoryGiBMonth.toFixed(2), '1'],
          ['backupprod', '0.00', '0.00', '0'],
          ['secretsprod', '0.00', '0.00', '0'],
          ['ingressprod', '0.00', '0.00', '0'],
        ])
        await expectClean(page, 'usage')

        // The link as the page has it, fetched by the page with its session cookie (no token anywhere).
        const link = page.locator('aria/Download PDF of acme, October 2025[role="link"]')
        const href = await (await link.waitHandle()).evaluate((a) => (a as HTMLAnchorElement).href)
        expect(href).toBe(`${origin}/api/v1/dashboard/summary/2025/10/download?org=acme`)
        const fetched = await page.evaluate(async (url: string) => {
          const res = await fetch(url)
          const bytes = new Uint8Array(await res.arrayBuffer())
          return { status: res.status, type: res.headers.get('content-type'), head: String.fromCharCode(...bytes.slice(0, 5)) }
        }, href)
        expect(fetched).toEqual({ status: 200, type: 'application/pdf', head: '%PDF-' })

        // Clicked, Chromium saves the report as a file.
        const downloads = tempDir('console-usage-downloads-')
        const cdp = await browser.target().createCDPSession()
        await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads })
        await link.click()
        const file = join(downloads, 'usage-acme-2025-10.pdf')
        await eventually(() => existsSync(file), 30_000)
        expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-')
      },
      { PLATFORM_MODES: 'billing' },
    )
  }, 120_000)

  test('an org owner who is no site admin → each org says only site administrators read usage reports; no figures, no PDF link', async () => {
    await withConsole(
      async ({ t, origin, open }) => {
        const [olga] = await t.users('olga')
        await makeOrg(t, 'acme', { owner: olga! })
        const page = await open('/login?redirect_to=%2Fusage')
        await passwordStep(page, 'olga', PASSWORD)
        await expectAt(page, origin, '/usage', 'Usage')
        await page.waitForFunction(
          () => document.querySelector('main section p')?.textContent === 'Only site administrators can read usage reports.',
          {
            timeout: 20_000,
          },
        )
        expect(await page.$eval('main h2', (h) => h.textContent)).toBe('acme')
        expect(await page.$('table')).toBeNull()
        expect(await page.$('a[href*="/download"]')).toBeNull()
        await expectClean(page, 'usage-refused')
      },
      { PLATFORM_MODES: 'billing' },
    )
  }, 60_000)
})
