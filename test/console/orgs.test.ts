import { afterAll, describe, expect, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { startEmulator } from '../../src/kube-emulator'
import { importAs, importBody } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { PASSWORD, type TestApp, type TestUser } from '../support/app'
import { startOidcProvider } from '../support/oidc-provider'
import { expectAt, expectClean, passwordStep, withConsole } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** Test members and the OpenID provider listen on loopback. */
const LOOPBACK = { PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' }

/** Signs `login` in through the real /login and waits at `path`, whose heading is `heading`. */
async function signedInAt(open: (path: string) => Promise<Page>, origin: string, login: string, path: string, heading: string) {
  const page = await open(`/login?redirect_to=${encodeURIComponent(path)}`)
  await passwordStep(page, login, PASSWORD)
  await expectAt(page, origin, path, heading)
  return page
}

/** Waits until the element `selector` of the page holds `text` (or, with `present` false, no longer does). */
const waitForText = (page: Page, selector: string, text: string, present = true) =>
  page.waitForFunction(
    (s: string, x: string, p: boolean) => (document.querySelector(s)?.textContent?.includes(x) ?? false) === p,
    { timeout: 20_000 },
    selector,
    text,
    present,
  )

const json = async <T>(response: Promise<Response>) => (await (await response).json()) as T

/** The org's teams as the API has them: name → permission. */
const teamsOf = async (t: TestApp, who: TestUser, org: string) =>
  Object.fromEntries(
    (await json<{ name: string; permission: string }[]>(t.as(who).get(`/api/v1/orgs/${org}/teams`))).map((team) => [
      team.name,
      team.permission,
    ]),
  )

describe('/orgs in Chromium', () => {
  test('"Organization name", "Create organization" → the caller owns it and lands on /orgs/<org>; /orgs lists it', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const page = await signedInAt(open, origin, 'alice', '/orgs/new', 'New organization')
      await page.locator('aria/Organization name[role="textbox"]').fill('acme')
      await page.locator('aria/Visibility[role="combobox"]').fill('private')
      await expectClean(page, 'org-new')
      await page.locator('aria/Create organization[role="button"]').click()
      await expectAt(page, origin, '/orgs/acme', 'acme')
      await waitForText(page, 'main', 'You are an owner of it.')
      const org = await json<{ visibility: string }>(t.as(alice!).get('/api/v1/orgs/acme'))
      expect(org.visibility).toBe('private')
      expect((await t.as(alice!).get('/api/v1/orgs/acme/is-owner')).status).toBe(200)

      const list = await open('/orgs')
      await list.locator('aria/acme[role="link"]').wait()
      await expectClean(list, 'orgs')
      await list.locator('aria/New organization[role="link"]').click()
      await expectAt(list, origin, '/orgs/new', 'New organization')
    })
  }, 90_000)

  test('a name already taken → the reason beside "Organization name", in words; no org made', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice, bob] = await t.users('alice', 'bob')
      await makeOrg(t, 'acme', { owner: bob! })
      const page = await signedInAt(open, origin, 'alice', '/orgs/new', 'New organization')
      await page.locator('aria/Organization name[role="textbox"]').fill('acme')
      await page.locator('aria/Create organization[role="button"]').click()
      await page.waitForFunction(() => Boolean(document.querySelector('#org-name-error')), { timeout: 20_000 })
      expect(await page.$eval('#org-name-error', (node) => node.textContent)).toBe('Is already taken')
      expect(page.url()).toBe(`${origin}/orgs/new`)
      expect(await json<unknown[]>(t.as(alice!).get('/api/v1/user/orgs'))).toEqual([])
      await expectClean(page, 'org-new-taken')
    })
  }, 90_000)

  test('an owner makes a team with a permission and a member, adds a member into a team (an unknown one told in words), removes one, changes and deletes the team', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice, bob] = await t.users('alice', 'bob', 'carol')
      await makeOrg(t, 'acme', { owner: alice! })
      const page = await signedInAt(open, origin, 'alice', '/orgs/acme', 'acme')
      await page.locator('aria/Team name[role="textbox"]').fill('viewers')
      await page.locator('aria/Permission[role="combobox"]').fill('write')
      await page.locator('aria/Create team[role="button"]').click()
      await page.locator('aria/Username to add to viewers[role="textbox"]').fill('bob')
      await page.locator('aria/Add to team viewers[role="button"]').click()
      await waitForText(page, '[aria-label="Members of viewers"]', 'bob')
      const permissionOfViewers = () => page.$eval('select[id$="-permission"]:not(#team-permission)', (s) => (s as HTMLSelectElement).value)
      expect(await permissionOfViewers()).toBe('write')
      expect(await teamsOf(t, alice!, 'acme')).toEqual({ Owners: 'owner', viewers: 'write' })

      // An unknown username: the API's reason at the top, in words.
      await page.locator('aria/Username[role="textbox"]').fill('nobody')
      await page.locator('aria/Add member[role="button"]').click()
      await waitForText(page, '[role="alert"]', 'User does not exist')
      await page.locator('aria/Username[role="textbox"]').fill('carol')
      await page.locator('aria/Team[role="combobox"]').fill('viewers')
      await page.locator('aria/Add member[role="button"]').click()
      await waitForText(page, '[aria-label="Members"]', 'carol')
      await waitForText(page, '[aria-label="Members of viewers"]', 'carol')
      expect((await t.as(alice!).get('/api/v1/orgs/acme/members/carol')).status).toBe(204)
      await expectClean(page, 'org-owner')

      await page.locator('aria/Remove carol from the organization[role="button"]').click()
      await waitForText(page, '[aria-label="Members"]', 'carol', false)
      expect((await t.as(alice!).get('/api/v1/orgs/acme/members/carol')).status).toBe(404)

      await page.locator('aria/Permission of viewers[role="combobox"]').fill('admin')
      await page.locator('aria/Save permission of viewers[role="button"]').click()
      await waitForText(page, 'main', 'Permission: admin')
      expect(await teamsOf(t, alice!, 'acme')).toEqual({ Owners: 'owner', viewers: 'admin' })
      expect((await t.as(bob!).get('/api/v1/orgs/acme/members/bob')).status).toBe(204)

      await page.locator('aria/Delete team viewers[role="button"]').click()
      await page.waitForFunction(() => ![...document.querySelectorAll('h3')].some((h) => h.textContent === 'viewers'), { timeout: 20_000 })
      expect(await teamsOf(t, alice!, 'acme')).toEqual({ Owners: 'owner' })
    })
  }, 120_000)

  test("the org's clusters: one imported through the API is listed with its status and leads to its page; on / the org that owns it leads to the org", async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      await makeOrg(t, 'acme', { owner: alice! })
      expect((await importAs(t, alice!, 'acme', importBody(member, 'prod'))).status).toBe(201)
      const page = await signedInAt(open, origin, 'alice', '/orgs/acme', 'acme')
      await waitForText(page, 'table', 'Active')
      const row = await page.evaluate(() => [...document.querySelectorAll('tbody td')].slice(0, 2).map((cell) => cell.textContent))
      expect(row).toEqual(['prod', 'Active'])
      await page.locator('aria/prod[role="link"]').click()
      await expectAt(page, origin, '/clusters/acme/prod', 'prod')
      // On /, the org that owns it leads to the org's page.
      const home = await open('/')
      await home.locator('aria/acme[role="link"]').click()
      await expectAt(home, origin, '/orgs/acme', 'acme')
    }, LOOPBACK)
  }, 90_000)

  test('an owner creates the single sign-on source against a real OpenID provider; the audit lists the changes the page made', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      const { org } = await makeOrg(t, 'acme', { owner: alice! })
      const idp = await startOidcProvider([`${origin}/api/v1/user/oauth2/org-${org.id}`])
      const page = await signedInAt(open, origin, 'alice', '/orgs/acme', 'acme')
      await waitForText(page, 'main', `${origin}/api/v1/user/oauth2/org-${org.id}`)
      await page.locator('aria/Display name[role="textbox"]').fill('Acme Login')
      await page.locator('aria/Client ID[role="textbox"]').fill(idp.clientId)
      await page.locator('aria/Client secret').fill(idp.clientSecret)
      await page.locator('aria/Discovery URL[role="textbox"]').fill(`${idp.issuer}/.well-known/openid-configuration`)
      await page.locator('aria/Create single sign-on[role="button"]').click()
      await page.locator('aria/Delete single sign-on[role="button"]').wait()
      const source = await json<Record<string, unknown>>(t.as(alice!).get('/api/v1/orgs/acme/auth-source'))
      expect(source).toMatchObject({ name: 'Acme Login', provider: 'openidConnect', clientID: idp.clientId, isActive: true })
      // The secret went to the API and never comes back, neither in the page nor in the form.
      await waitForText(page, 'table.audit', 'POST /api/v1/orgs/{org}/auth-source → 201 allowed')
      expect(await page.evaluate(() => document.body.textContent)).not.toContain(idp.clientSecret)
      expect(await page.$eval('#sso-client-secret', (input) => (input as HTMLInputElement).value)).toBe('')
      await expectClean(page, 'org-sso-audit')

      await page.locator('aria/Active').click()
      await page.locator('aria/Save single sign-on[role="button"]').click()
      await waitForText(page, '.facts', 'paused')
      expect(await json<{ isActive: boolean }>(t.as(alice!).get('/api/v1/orgs/acme/auth-source'))).toMatchObject({ isActive: false })
      await page.locator('aria/Delete single sign-on[role="button"]').click()
      await waitForText(page, 'main', 'No single sign-on source')
      expect((await t.as(alice!).get('/api/v1/orgs/acme/auth-source')).status).toBe(404)
      await waitForText(page, 'table.audit', 'DELETE /api/v1/orgs/{org}/auth-source → 204 allowed')
    }, LOOPBACK)
  }, 120_000)

  test('the audit shows 20 events a page, newest first; "Older events" and "Newer events" move between the pages', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice] = await t.users('alice')
      await makeOrg(t, 'acme', { owner: alice! })
      // 21 changes of the org through the API, each an event of the org.
      for (let n = 1; n <= 21; n++)
        expect((await t.as(alice!).send('PATCH', '/api/v1/orgs/acme', { full_name: `Acme ${n}` })).status).toBe(200)
      const page = await signedInAt(open, origin, 'alice', '/orgs/acme', 'acme')
      await waitForText(page, 'table.audit caption', 'page 1 of 2')
      expect(await page.$$eval('table.audit tbody tr', (rows) => rows.length)).toBe(20)
      await page.locator('aria/Older events[role="button"]').click()
      await waitForText(page, 'table.audit caption', 'page 2 of 2')
      const rows = await page.$$eval('table.audit tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''))
      expect(rows.length).toBe(1)
      expect(rows[0]).toContain('PATCH /api/v1/orgs/{org} → 200 allowed')
      expect(await page.$eval('aria/Older events[role="button"]', (button) => (button as HTMLButtonElement).disabled)).toBe(true)
      await page.locator('aria/Newer events[role="button"]').click()
      await waitForText(page, 'table.audit caption', 'page 1 of 2')
    })
  }, 90_000)

  test('a plain member sees the members and teams but no single sign-on, no audit and no control that changes the org; an outsider is told the teams are hidden, and a private org is not found', async () => {
    await withConsole(async ({ t, origin, open }) => {
      const [alice, bob] = await t.users('alice', 'bob', 'carol')
      await makeOrg(t, 'acme', { owner: alice!, members: [bob!] })
      const page = await signedInAt(open, origin, 'bob', '/orgs/acme', 'acme')
      await waitForText(page, '[aria-label="Members of Members"]', 'bob')
      await waitForText(page, 'main', 'You are not an owner of it.')
      const text = await page.evaluate(() => document.querySelector('main')?.textContent ?? '')
      expect(text).toContain('alice')
      expect(text).toContain("Only the team's members and the organization's owners see who is in it.")
      expect(text).toContain('None of its clusters is granted to a team of yours.')
      const headings = await page.evaluate(() => [...document.querySelectorAll('h2')].map((h) => h.textContent))
      expect(headings).toEqual(['Members', 'Teams', 'Clusters'])
      expect(await page.$$eval('main button, main input, main select', (controls) => controls.length)).toBe(0)
      await expectClean(page, 'org-member')

      // Someone outside the org sees its public members; its teams are refused them, and the page says so.
      const outsider = await signedInAt(open, origin, 'carol', '/orgs/acme', 'acme')
      await waitForText(outsider, 'main', "Only the organization's members see its teams.")
      expect(await outsider.evaluate(() => document.querySelector('main')?.textContent)).toContain('No public members.')
      expect(await outsider.$$eval('main button, main input, main select', (controls) => controls.length)).toBe(0)
      await expectClean(outsider, 'org-outsider')
      // A private org is hidden from outsiders: the API's 404, in words.
      await makeOrg(t, 'hidden', { owner: alice!, visibility: 'private' })
      const hidden = await signedInAt(open, origin, 'carol', '/orgs/hidden', 'hidden')
      await waitForText(hidden, '[role="alert"]', 'Organization does not exist')
      expect(await hidden.$('main h2')).toBeNull()
    })
  }, 90_000)
})
