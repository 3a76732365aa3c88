import { expect } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import axe from 'axe-core'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { CHROMIUM_FLAGS } from '../../src/usage/pdf/printer'
import { makeTestApp, type TestApp } from '../support/app'
import { freePort } from '../support/ports'

/** Where each page visited leaves a screenshot for people to look at (git ignores .artifacts/). */
const SCREENSHOTS = resolve(import.meta.dir, '..', '..', '.artifacts', 'console')
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']

/** What a page did that the console must never do: script errors, policy violations, requests to other origins. */
interface Watch {
  errors: string[]
  foreign: string[]
}
const watches = new WeakMap<Page, Watch>()

/**
 * An app on a real port whose public URL is `http://localhost:<port>` (a secure context, and a valid WebAuthn RP
 * ID), and a Chromium; `open` gives a page that records what `expectClean` checks. Both end with `run`.
 */
export async function withConsole(
  run: (lab: { t: TestApp; origin: string; browser: Browser; open: (path: string) => Promise<Page> }) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const port = freePort()
  const origin = `http://localhost:${port}`
  const t = await makeTestApp({ PLATFORM_PUBLIC_URL: origin, PORT: String(port), ...env })
  const server = t.app.listen({ port, hostname: '127.0.0.1', reusePort: false })
  const browser = await puppeteer.launch({ executablePath: t.config.chromiumPath, headless: true, pipe: true, args: CHROMIUM_FLAGS })
  const open = async (path: string) => {
    const page = await browser.newPage()
    const watch: Watch = { errors: [], foreign: [] }
    watches.set(page, watch)
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))
    })
    page.on('pageerror', (error) => watch.errors.push(`page error: ${error instanceof Error ? error.message : String(error)}`))
    // The API's 4xx answers (a wrong password, a 401 before signing in) are logged by Chromium as failed loads: not script errors.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) watch.errors.push(message.text())
    })
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== origin) watch.foreign.push(request.url())
    })
    await page.goto(`${origin}${path}`, { waitUntil: 'networkidle0' })
    return page
  }
  try {
    await run({ t, origin, browser, open })
  } finally {
    await browser.close()
    await server.stop()
  }
}

/**
 * The checks of every page visited: no script error or policy violation, no request to another origin, no WCAG 2.1
 * A/AA violation by axe-core, nothing wider than a 360 px screen; then a screenshot named `name`.
 */
export async function expectClean(page: Page, name: string): Promise<void> {
  const watch = watches.get(page)!
  // Injected over the DevTools protocol, outside the page's policy (which would block a script tag, rightly).
  await page.evaluate(axe.source)
  const violations = await page.evaluate(async (tags: string[]) => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string }[] }> } })
      .axe
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags } })
    return result.violations.map((v) => v.id)
  }, WCAG_21_AA)
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  // Width alone: switching to a mobile device would reload the page and lose the state under test.
  await page.setViewport({ width: 360, height: 740 })
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-360px.png`), fullPage: true })
  await page.setViewport({ width: 800, height: 600 })
  expect({ page: name, errors: watch.errors, foreign: watch.foreign, axe: violations, overflow }).toEqual({
    page: name,
    errors: [],
    foreign: [],
    axe: [],
    overflow: 0,
  })
}

/** Waits for the page at `path` (after a navigation the page made itself) and its heading `heading`. */
export async function expectAt(page: Page, origin: string, path: string, heading: string): Promise<void> {
  await page.waitForFunction((h: string) => document.querySelector('h1')?.textContent === h, { timeout: 20_000 }, heading)
  expect(page.url()).toBe(`${origin}${path}`)
}

/** Signs in on the open `/login` page by the names of docs/decisions.md §11. */
export async function passwordStep(page: Page, login: string, password: string): Promise<void> {
  await page.locator('aria/Username or email[role="textbox"]').fill(login)
  await page.locator('aria/Password').fill(password)
  await page.locator('aria/Sign in[role="button"]').click()
}
