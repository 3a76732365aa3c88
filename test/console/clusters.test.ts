import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import { deadRegistrationFixture } from '../clusters/support'
import { basic, PASSWORD, tempDir } from '../support/app'
import { eventually } from '../support/wait'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

describe('clusters in Chromium', () => {
  test("/ lists the caller's clusters with their status; the name leads to /clusters/<owner>/<name>", async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      await deadRegistrationFixture(t, alice!.user, 'dev')
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
      await page.waitForFunction(() => document.querySelector('tbody tr')?.textContent?.includes('NotReady'), { timeout: 20_000 })
      const row = await page.evaluate(() => [...document.querySelectorAll('tbody td')].map((cell) => cell.textContent))
      expect(row).toEqual(['dev', 'alice', 'NotReady', '–'])
      await expectClean(page, 'home-clusters')
      await page.locator('aria/dev[role="link"]').click()
      await expectAt(page, origin, '/clusters/alice/dev', 'dev')
      await page.waitForFunction(() => document.querySelector('.facts')?.textContent?.includes('NotReady'), { timeout: 20_000 })
      await expectClean(page, 'cluster')
    })
  }, 60_000)

  test('"Download kubeconfig" and "Download read-only kubeconfig" save files whose tokens may write, and only read, the cluster', async () => {
    await withConsole(async ({ t, origin, browser, open }) => {
      const [alice] = await t.users('alice')
      await deadRegistrationFixture(t, alice!.user, 'dev')
      const downloads = tempDir('console-downloads-')
      const cdp = await browser.target().createCDPSession()
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads })
      const page = await open('/login?redirect_to=%2Fclusters%2Falice%2Fdev')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/clusters/alice/dev', 'dev')
      await page.locator('aria/Download kubeconfig[role="button"]').click()
      await page.locator('aria/Download read-only kubeconfig[role="button"]').click()
      const tokenIn = async (file: string) => {
        const path = join(downloads, file)
        await eventually(() => existsSync(path), 20_000)
        const config = YAML.parse(readFileSync(path, 'utf8'))
        expect(config.clusters[0].cluster.server).toBe(`${origin}/api/v1/clusters/alice/dev/k8s`)
        return config.users[0].user.token as string
      }
      const full = await tokenIn('alice-dev.kubeconfig')
      const readOnly = await tokenIn('alice-dev-readonly.kubeconfig')
      const rename = (token: string) =>
        t.request('PATCH', '/api/v1/clustersv2/alice/dev', { token, body: { displayName: 'Development' } }).then((r) => r.status)
      expect(await rename(readOnly)).toBe(403)
      expect((await t.request('GET', '/api/v1/clustersv2/alice/dev', { token: readOnly })).status).toBe(200)
      expect(await rename(full)).not.toBe(403)
      const tokens = await t.request('GET', '/api/v1/users/alice/tokens', { headers: { authorization: basic('alice', PASSWORD) } })
      const scopes = Object.fromEntries(((await tokens.json()) as { name: string; scopes: string[] }[]).map((k) => [k.name, k.scopes]))
      expect(scopes).toMatchObject({ 'kubeconfig-alice-dev': ['write:cluster'], 'kubeconfig-alice-dev-readonly': ['read:cluster'] })
    })
  }, 60_000)
})
