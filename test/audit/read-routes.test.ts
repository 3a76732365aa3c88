import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/audit/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { auditAt } from './support'

/** Two orgs, each with an owner and a plain member, and one change in each (a team made by its owner). */
async function twoOrgs(): Promise<{ t: TestApp; olga: TestUser; mia: TestUser; gus: TestUser; root: TestUser }> {
  const t = await makeTestApp()
  const root = await t.admin()
  const [olga, mia, gus] = await t.users('olga', 'mia', 'gus')
  await makeOrg(t, 'acme', { owner: olga!, members: [mia!] })
  await makeOrg(t, 'globex', { owner: gus!, visibility: 'private' })
  expect((await t.as(olga!).send('POST', '/api/v1/orgs/acme/teams', { name: 'ops' }, { 'x-request-id': 'acme-team' })).status).toBe(201)
  expect((await t.as(gus!).send('POST', '/api/v1/orgs/globex/teams', { name: 'ops' }, { 'x-request-id': 'globex-team' })).status).toBe(201)
  return { t, olga: olga!, mia: mia!, gus: gus!, root }
}

describe('GET /orgs/{org}/audit', () => {
  test("an owner sees their org's events and not another org's", async () => {
    const { t, olga, gus } = await twoOrgs()
    expect((await auditAt(t, olga, '/api/v1/orgs/acme/audit')).map((e) => e.requestId)).toEqual(['acme-team'])
    expect((await auditAt(t, gus, '/api/v1/orgs/globex/audit')).map((e) => e.requestId)).toEqual(['globex-team'])
  })

  test('a member who does not own the org → 403; anonymous → 401; an org hidden from the caller → 404; a site admin → 200', async () => {
    const { t, olga, mia, root } = await twoOrgs()
    expect((await t.as(mia).get('/api/v1/orgs/acme/audit')).status).toBe(403)
    expect((await t.request('GET', '/api/v1/orgs/acme/audit')).status).toBe(401)
    expect((await t.as(olga).get('/api/v1/orgs/globex/audit')).status).toBe(404)
    expect((await t.as(root).get('/api/v1/orgs/globex/audit')).status).toBe(200)
  })
})

describe('GET /admin/audit and /user/audit', () => {
  test('a site admin sees every event; anyone else 403, anonymous 401', async () => {
    const { t, olga, root } = await twoOrgs()
    expect((await auditAt(t, root)).map((e) => e.requestId).sort()).toEqual(['acme-team', 'globex-team'])
    expect((await t.as(olga).get('/api/v1/admin/audit')).status).toBe(403)
    expect((await t.request('GET', '/api/v1/admin/audit')).status).toBe(401)
  })

  test('a user sees their own events only; anonymous 401', async () => {
    const { t, olga, mia } = await twoOrgs()
    expect((await auditAt(t, olga, '/api/v1/user/audit')).map((e) => e.requestId)).toEqual(['acme-team'])
    expect(await auditAt(t, mia, '/api/v1/user/audit')).toEqual([])
    expect((await t.request('GET', '/api/v1/user/audit')).status).toBe(401)
  })
})

describe('filters and pages', () => {
  test('actor, kind, result, since and until narrow the list; newest first', async () => {
    const { t, olga, root } = await twoOrgs()
    t.clock.advance(60_000)
    const later = new Date(t.clock.now()).toISOString()
    expect((await t.as(olga).send('DELETE', '/api/v1/orgs/globex', undefined, { 'x-request-id': 'olga-refused' })).status).toBe(404)
    const ids = async (query: string) => (await auditAt(t, root, `/api/v1/admin/audit?${query}`)).map((e) => e.requestId)
    expect(await ids('actor=olga')).toEqual(['olga-refused', 'acme-team'])
    expect(await ids('result=refused')).toEqual(['olga-refused'])
    expect(await ids('kind=signin')).toEqual([])
    expect(await ids(`since=${later}`)).toEqual(['olga-refused'])
    expect(await ids(`until=${later}`)).toEqual(expect.arrayContaining(['acme-team', 'globex-team']))
    expect(await ids(`until=${later}`)).not.toContain('olga-refused')
  })

  test('a malformed time or kind → 422 naming the field', async () => {
    const { t, root } = await twoOrgs()
    const since = await t.as(root).get('/api/v1/admin/audit?since=yesterday')
    expect(since.status).toBe(422)
    expect((await since.json()).errors).toEqual([{ field: 'since', message: Messages.badTime }])
    expect((await t.as(root).get('/api/v1/admin/audit?kind=everything')).status).toBe(422)
  })

  test('pages of limit events with X-Total-Count and Link', async () => {
    const { t, olga } = await twoOrgs()
    for (const name of ['a', 'b', 'c']) await t.as(olga).send('POST', '/api/v1/orgs/acme/teams', { name })
    const res = await t.as(olga).get('/api/v1/orgs/acme/audit?limit=2&page=1')
    expect(res.headers.get('x-total-count')).toBe('4')
    expect(res.headers.get('link')).toContain('rel="next"')
    expect(((await res.json()) as unknown[]).length).toBe(2)
    expect(((await (await t.as(olga).get('/api/v1/orgs/acme/audit?limit=2&page=2')).json()) as unknown[]).length).toBe(2)
  })
})
