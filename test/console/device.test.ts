import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { basic, PASSWORD, tempDir } from '../support/app'
import { stopWithScope } from '../support/children'
import { MAIN } from '../support/process'
import { readUntil } from '../support/wait'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

const CODE_LINE = /one-time code: ([A-Z]{4}-[A-Z]{4})/
const URL_LINE = /approve the code: (\S+)/

/** `platform-api login <origin>` in a fresh HOME (plain http: no CA to confirm), once it has printed its code and page. */
async function startLogin(origin: string) {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && name !== 'KUBECONFIG' && name !== 'XDG_CONFIG_HOME') env[name] = value
  const child = stopWithScope(
    Bun.spawn([process.execPath, MAIN, 'login', origin], { env: { ...env, HOME: tempDir() }, stdout: 'pipe', stderr: 'pipe' }),
  )
  const reader = child.stdout.getReader()
  const out = await readUntil(reader, URL_LINE)
  return { child, reader, out, userCode: CODE_LINE.exec(out)![1]!, page: URL_LINE.exec(out)![1]! }
}

/** The words shown beside the "Code" field after "Continue". */
async function codeError(page: Page): Promise<string> {
  await page.waitForSelector('#user_code-error', { timeout: 20_000 })
  return page.evaluate(() => document.querySelector('#user_code-error')!.textContent!)
}

describe('/login/device in Chromium', () => {
  test('signed out → /login and back with the code; "Continue" names the client and scopes; "Authorize" signs the terminal in; "Cancel" on a second one → access denied', async () => {
    await withConsole(async ({ origin, t, open }) => {
      await t.users('alice')
      const first = await startLogin(origin)
      expect(first.page).toBe(`${origin}/login/device?user_code=${first.userCode}`)
      const devicePath = first.page.slice(origin.length)
      const page = await open(devicePath)
      await expectAt(page, origin, `/login?redirect_to=${encodeURIComponent(devicePath)}`, 'Sign in')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, devicePath, 'Device sign-in')
      expect(await page.$eval('#user_code', (input) => (input as HTMLInputElement).value)).toBe(first.userCode)
      await expectClean(page, 'device-code')
      await page.locator('aria/Continue[role="button"]').click()
      await page.locator('aria/Authorize[role="button"]').wait()
      const text = await page.evaluate(() => document.querySelector('main')!.textContent)
      expect(text).toContain('platform-api command line')
      expect(text).toContain(first.userCode)
      await expectClean(page, 'device-request')
      await page.locator('aria/Authorize[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent?.startsWith('Authorized'), {
        timeout: 20_000,
      })
      await expectClean(page, 'device-authorized')
      const done = await readUntil(first.reader, /Logged in/, first.out)
      expect(await first.child.exited).toBe(0)
      expect(done).toContain(`Logged in to ${origin} as alice`)

      const second = await startLogin(origin)
      await page.goto(`${origin}/login/device`, { waitUntil: 'networkidle0' })
      await page.locator('aria/Code').fill(second.userCode.toLowerCase())
      await page.locator('aria/Continue[role="button"]').click()
      await page.locator('aria/Cancel[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent?.startsWith('Denied'), { timeout: 20_000 })
      expect(await second.child.exited).toBe(1)
      expect(await new Response(second.child.stderr).text()).toContain('the sign-in was denied')
    })
  }, 120_000)

  test('an unknown code (404), an answered one (409) and a malformed one (422) are told beside the field, in words', async () => {
    await withConsole(async ({ origin, t, open }) => {
      await t.users('alice')
      const started = await t.request('POST', '/login/oauth/device_authorization', { body: { client_id: 'platform-cli' } })
      const { user_code: answeredCode } = (await started.json()) as { user_code: string }
      const denied = await t.request('POST', '/api/v1/user/device', {
        headers: { authorization: basic('alice', PASSWORD) },
        body: { user_code: answeredCode, approve: false },
      })
      expect(denied.status).toBe(200)
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
      const cases: [string, string][] = [
        ['BCDF-GHJK', 'No sign-in is waiting for that code'],
        [answeredCode, 'That code was already approved or denied'],
        ['12', 'The code is 8 letters as the terminal shows it'],
      ]
      for (const [code, words] of cases) {
        await page.goto(`${origin}/login/device?user_code=${encodeURIComponent(code)}`, { waitUntil: 'networkidle0' })
        await page.locator('aria/Continue[role="button"]').click()
        expect(await codeError(page)).toStartWith(words)
        expect(await page.$eval('#user_code', (input) => input.getAttribute('aria-invalid'))).toBe('true')
      }
      await expectClean(page, 'device-error')
    })
  }, 90_000)
})
