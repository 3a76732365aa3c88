import { describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { deadRegistrationFixture } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { PASSWORD, type TestApp } from '../support/app'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

/** Org acme (owner alice, rita on its read team Members) with the cluster prod, and a write team deployers. */
async function orgWithCluster(t: TestApp) {
  const [alice, rita] = await t.users('alice', 'rita')
  const { org, membersTeam } = await makeOrg(t, 'acme', { owner: alice!, members: [rita!] })
  const deployers = await (await t.as(alice!).send('POST', '/api/v1/orgs/acme/teams', { name: 'deployers', permission: 'write' })).json()
  await deadRegistrationFixture(t, org, 'prod')
  return { alice: alice!, rita: rita!, members: membersTeam!.id, deployers: deployers.id as number }
}

async function clusterPageOf(open: (path: string) => Promise<Page>, origin: string, login: string): Promise<Page> {
  const page = await open('/login?redirect_to=%2Fclusters%2Facme%2Fprod')
  await passwordStep(page, login, PASSWORD)
  await expectAt(page, origin, '/clusters/acme/prod', 'prod')
  await page.waitForSelector('#teams-heading', { timeout: 20_000 })
  return page
}

describe('team grants on /clusters/<owner>/<name> in Chromium', () => {
  test('the org owner picks a "Team" and "Grant" → the team is listed and granted the cluster; "Revoke" → taken away', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const l = await orgWithCluster(t)
      const clustersOf = async (teamId: number) =>
        ((await (await t.as(l.alice).get(`/api/v1/teams/${teamId}/clusters`)).json()) as { name: string }[]).map((c) => c.name)
      const page = await clusterPageOf(open, origin, 'alice')
      await page.waitForSelector('#grant-team', { timeout: 20_000 })
      expect(await page.$eval('#teams-heading + [role="alert"] + p', (p) => p.textContent)).toBe(
        'No team of acme has been granted this cluster.',
      )
      await page.select('#grant-team', String(l.deployers))
      await page.locator('aria/Grant[role="button"]').click()
      await page.waitForFunction(
        () => document.querySelector('[aria-label="Teams granted this cluster"]')?.textContent?.includes('deployers'),
        {
          timeout: 20_000,
        },
      )
      expect(await clustersOf(l.deployers)).toEqual(['prod'])
      expect(await clustersOf(l.members)).toEqual([])
      // A granted team is no longer offered.
      expect(await page.$$eval('#grant-team option', (options) => options.map((o) => o.textContent))).not.toContain('deployers (write)')
      await expectClean(page, 'cluster-teams')
      await page.locator('aria/Revoke deployers[role="button"]').click()
      await page.waitForFunction(() => !document.querySelector('[aria-label="Teams granted this cluster"]'), { timeout: 20_000 })
      expect(await clustersOf(l.deployers)).toEqual([])
    })
  }, 90_000)

  test('a member of a granted read team sees the teams granted, with no "Grant" or "Revoke"', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const l = await orgWithCluster(t)
      for (const team of [l.members, l.deployers])
        expect((await t.as(l.alice).send('PUT', `/api/v1/teams/${team}/clusters/prod`)).status).toBe(204)
      const page = await clusterPageOf(open, origin, 'rita')
      await page.waitForFunction(() => document.querySelector('[aria-label="Teams granted this cluster"]')?.children.length === 2, {
        timeout: 20_000,
      })
      const rows = await page.$$eval('[aria-label="Teams granted this cluster"] li', (items) => items.map((li) => li.textContent))
      expect(rows).toEqual(['deployers · write: every verb', 'Members · read only'])
      expect(await page.$('#grant-team')).toBeNull()
      expect(
        await page.$$eval('button', (buttons) => buttons.map((b) => b.textContent).filter((text) => text?.startsWith('Revoke'))),
      ).toEqual([])
      await expectClean(page, 'cluster-teams-member')
    })
  }, 90_000)
})
