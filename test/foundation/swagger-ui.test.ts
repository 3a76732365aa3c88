import { afterAll, expect, test } from 'bun:test'
import puppeteer from 'puppeteer-core'
import { CHROMIUM_FLAGS } from '../../src/usage/pdf/printer'
import { makeTestApp } from '../support/app'

test("the Swagger UI in a real browser loads the document and lists the operations (GET /user's summary is on the page)", async () => {
  const t = await makeTestApp()
  const base = await t.listen()
  const browser = await puppeteer.launch({ executablePath: t.config.chromiumPath, headless: true, pipe: true, args: CHROMIUM_FLAGS })
  afterAll(() => browser.close())
  const page = await browser.newPage()
  // A loaded machine takes longer than goto's default 30 s to render the document's operations.
  await page.goto(`${base}/api/v1/swagger`, { waitUntil: 'networkidle0', timeout: 60_000 })
  await page.waitForSelector('.opblock-summary-description', { timeout: 60_000 })
  const text = await page.evaluate(() => document.body.textContent)
  expect(text).not.toContain('Failed to load API definition')
  expect(text).toContain('Get the authenticated user')
  if (process.env.SWAGGER_SCREENSHOT) await page.screenshot({ path: process.env.SWAGGER_SCREENSHOT })
}, 90_000)
