import { afterAll, describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { startEmulator } from '../../src/kube-emulator'
import { PASSWORD, type TestApp, type TestUser } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** A Kubernetes API server over TLS with its own certificate authority, on loopback. */
const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())
/** The member listens on loopback: the platform may dial private addresses here. */
const LOOPBACK_MEMBERS = { PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' }

async function homeOf(open: (path: string) => Promise<Page>, origin: string): Promise<Page> {
  const page = await open('/login')
  await passwordStep(page, 'alice', PASSWORD)
  await expectAt(page, origin, '/', 'Clusters')
  await page.waitForSelector('#import-name', { timeout: 20_000 })
  return page
}

const clustersOf = async (t: TestApp, who: TestUser) =>
  ((await (await t.as(who).get('/api/v1/user/clusters?all=true')).json()) as { ownerName: string; name: string }[]).map(
    (c) => `${c.ownerName}/${c.name}`,
  )

describe('"Import a cluster" in Chromium', () => {
  test('"Name", "API server URL", its "Certificate authority (PEM)" and a "Bearer token", "Import" → the emulator is registered and listed as Active', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await homeOf(open, origin)
      await page.locator('aria/Name[role="textbox"]').fill('lab')
      await page.locator('aria/Display name[role="textbox"]').fill('Lab cluster')
      await page.locator('aria/API server URL[role="textbox"]').fill(member.url)
      await page.locator('aria/Certificate authority (PEM)').fill(member.caCertPem!)
      await page.locator('aria/Bearer token').fill(member.token)
      await page.locator('aria/Import[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('tbody')?.textContent?.includes('Lab cluster'), { timeout: 20_000 })
      await page.waitForFunction(() => document.querySelector('.outcome')?.textContent === 'Cluster alice/lab imported.', {
        timeout: 20_000,
      })
      const row = await page.evaluate(() =>
        [...document.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
      )
      expect(row).toEqual([['Lab cluster', 'alice', 'Active', expect.stringMatching(/^v\d+\.\d+/)]])
      expect(await clustersOf(t, alice!)).toEqual(['alice/lab'])
      // The token typed in is not kept on the page once the cluster is registered.
      expect(await page.$eval('#import-token', (input) => (input as HTMLInputElement).value)).toBe('')
      await expectClean(page, 'home-import')
    }, LOOPBACK_MEMBERS)
  }, 90_000)

  test('no certificate authority for a server with its own → the TLS failure beside "API server URL", in words; nothing registered', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await homeOf(open, origin)
      await page.locator('aria/Name[role="textbox"]').fill('lab')
      await page.locator('aria/API server URL[role="textbox"]').fill(member.url)
      await page.locator('aria/Bearer token').fill(member.token)
      await page.locator('aria/Import[role="button"]').click()
      await page.waitForSelector('#import-server-error', { timeout: 20_000 })
      const reason = await page.$eval('#import-server-error', (node) => node.textContent ?? '')
      expect(reason).toStartWith('Cannot register:')
      expect(reason).toContain('certificate')
      expect(reason).not.toContain(member.token)
      expect(await page.$eval('#import-server', (input) => input.getAttribute('aria-describedby'))).toBe('import-server-error')
      expect(await clustersOf(t, alice!)).toEqual([])
      await expectClean(page, 'home-import-tls-error')
    }, LOOPBACK_MEMBERS)
  }, 90_000)

  test('an organization the caller administers is offered as "Owner": the cluster is imported for it', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      expect((await t.as(alice!).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
      const page = await homeOf(open, origin)
      await page.waitForFunction(() => [...document.querySelectorAll('#import-owner option')].some((o) => o.textContent === 'acme'), {
        timeout: 20_000,
      })
      await page.select('#import-owner', 'acme')
      await page.locator('aria/Name[role="textbox"]').fill('shared')
      await page.locator('aria/API server URL[role="textbox"]').fill(member.url)
      await page.locator('aria/Certificate authority (PEM)').fill(member.caCertPem!)
      await page.locator('aria/Bearer token').fill(member.token)
      await page.locator('aria/Import[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('.outcome')?.textContent === 'Cluster acme/shared imported.', {
        timeout: 20_000,
      })
      expect(await clustersOf(t, alice!)).toEqual(['acme/shared'])
    }, LOOPBACK_MEMBERS)
  }, 90_000)
})
