import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import { startEmulator } from '../../src/kube-emulator'
import { PASSWORD, tempDir } from '../support/app'
import { stopChild, stopWithScope } from '../support/children'
import { MAIN } from '../support/process'
import { eventually } from '../support/wait'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** The API server the agent serves: an emulator on loopback, which the platform itself may not dial. */
const member = await startEmulator({ tls: true })
afterAll(() => member.stop())

/** What the agent facts of the open cluster page say, by their terms. */
const agentFacts = (page: Page) =>
  page.evaluate(() => {
    const facts = [...document.querySelectorAll('dl.facts')].at(1)
    const terms = [...(facts?.querySelectorAll('dt') ?? [])].map((term) => term.textContent ?? '')
    const values = [...(facts?.querySelectorAll('dd') ?? [])].map((value) => value.textContent ?? '')
    return Object.fromEntries(terms.map((term, i) => [term, values[i]]))
  })

describe('agent clusters in Chromium', () => {
  test('"Connect a cluster" shows the token, the agent command and the manifest command once; the cluster page shows its agent not connected, then connected once the agent runs', async () => {
    await withConsole(async ({ t, origin, open }) => {
      await t.users('alice')
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
      await page.locator('aria/Cluster name').fill('edge')
      await page.locator('aria/Connect[role="button"]').click()
      await page.waitForSelector('.notice code', { timeout: 20_000 })
      const shown = await page.evaluate(() => [...document.querySelectorAll('.notice code')].map((code) => code.textContent ?? ''))
      const [token = '', command = '', install = ''] = shown
      expect(token).toMatch(/\S{20,}/)
      expect(command).toBe(`platform-api agent --server ${origin} --token ${token}`)
      expect(install).toBe(
        `curl -H "Authorization: Bearer ${token}" ${origin}/api/v1/clustersv2/alice/edge/agent.yaml | kubectl apply -f -`,
      )
      const manifest = await fetch(`${origin}/api/v1/clustersv2/alice/edge/agent.yaml`, { headers: { authorization: `Bearer ${token}` } })
      expect(manifest.status).toBe(200)
      await page.waitForFunction(() => document.querySelector('tbody')?.textContent?.includes('edge'), { timeout: 20_000 })
      await page.locator('aria/Copy agent command[role="button"]').click()
      await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent?.startsWith('Copied'), { timeout: 20_000 })
      await expectClean(page, 'home-connected')
      // Shown once: the home page again has the form and no token.
      await page.goto(`${origin}/`, { waitUntil: 'networkidle0' })
      expect(await page.evaluate(() => document.body.textContent)).not.toContain(token)

      await page.goto(`${origin}/clusters/alice/edge`, { waitUntil: 'networkidle0' })
      await page.waitForSelector('dl.facts + h2 + dl.facts', { timeout: 20_000 })
      expect(await agentFacts(page)).toMatchObject({ State: 'not connected', Since: 'never', Version: 'unknown' })
      await expectClean(page, 'cluster-agent-not-connected')

      const dir = tempDir()
      const kubeconfig = join(dir, 'member.kubeconfig')
      writeFileSync(kubeconfig, member.kubeconfig())
      const agent = stopWithScope(
        Bun.spawn([process.execPath, MAIN, 'agent', '--server', origin, '--kubeconfig', kubeconfig], {
          env: { ...process.env, PLATFORM_AGENT_TOKEN: token },
          stdin: 'ignore',
          stdout: 'pipe',
          stderr: 'pipe',
        }),
      )
      try {
        // The page reads the state when it loads: loaded again until the agent's tunnel is up.
        await eventually(async () => {
          await page.reload({ waitUntil: 'networkidle0' })
          return (await agentFacts(page)).State === 'connected'
        }, 20_000)
        const facts = await agentFacts(page)
        expect(facts.State).toBe('connected')
        expect(facts.Since).not.toBe('never')
        expect(facts['Last seen']).not.toBe('never')
        expect(facts.Version).not.toBe('unknown')
        expect(facts.Address).toContain('127.0.0.1')
        await expectClean(page, 'cluster-agent-connected')
      } finally {
        await stopChild(agent)
      }
    })
  }, 90_000)

  test('a name the API refuses → its words beside "Cluster name", no token shown, nothing registered', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await open('/login')
      await passwordStep(page, 'alice', PASSWORD)
      await expectAt(page, origin, '/', 'Clusters')
      await page.locator('aria/Cluster name').fill('no spaces allowed')
      await page.locator('aria/Connect[role="button"]').click()
      await page.waitForSelector('#name-error', { timeout: 20_000 })
      expect(await page.$eval('#name-error', (p) => p.textContent)).toMatch(/^[A-Z].*\S/)
      expect(await page.$eval('#name', (input) => input.getAttribute('aria-invalid'))).toBe('true')
      expect(await page.$('.notice')).toBeNull()
      expect(await (await t.as(alice!).get('/api/v1/clustersv2/alice')).json()).toEqual([])
      await expectClean(page, 'home-connect-refused')
    })
  }, 60_000)
})
