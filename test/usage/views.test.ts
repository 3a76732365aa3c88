import { describe, expect, test } from 'bun:test'
import { createOrg } from '../../src/orgs/service'
import { registrationFixture } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { syntheticEvents } from './dataset'
import { billingWorld, event, expectedUsage, hourly, requests, send, type UsageWorld, type WireEvent } from './support'

const V = '/api/v1/dashboard/summary'
const view = (path: string, query = '') => `${V}/2025/10/usage-report/products/${path}?org=acme${query ? `&${query}` : ''}`
const get = async (w: UsageWorld, path: string) => {
  const res = await w.t.as(w.admin).get(path)
  return { status: res.status, body: await res.json() }
}
type Item = Record<string, any>

const DB_VIEWS = [
  'objects-usage-view',
  'clusters-usage-view',
  'namespaces-usage-view',
  'gks-usage-view',
  'contracts-usage-view',
  'object-quota-history-summaries-view',
  'objects-cluster-mode-usage-view',
]

describe('product views', () => {
  test('empty database: every view of every product → 200 with the envelope and no items', async () => {
    const w = await billingWorld()
    for (const name of DB_VIEWS) {
      const { status, body } = await get(w, view(`dbprod/views/${name}`))
      expect({ name, status }).toEqual({ name, status: 200 })
      expect(body).toMatchObject({
        org: 'acme',
        year: 2025,
        month: 10,
        monthName: 'October',
        product: 'dbprod',
        viewType: 'total',
        items: [],
      })
    }
    for (const product of ['backupprod', 'secretsprod', 'ingressprod'])
      for (const name of ['clusters-usage-view', 'contracts-usage-view'])
        expect((await get(w, view(`${product}/views/${name}`))).status).toBe(200)
  })

  test('bad parameters → 400 (month 13, month Foo, year 25, view_type bogus, contractID abc); a dbprod-only view of backupprod → 404', async () => {
    const w = await billingWorld()
    for (const path of [
      `${V}/2025/13/usage-report/products/dbprod/views/objects-usage-view?org=acme`,
      `${V}/2025/Foo/usage-report/products/dbprod/views/objects-usage-view?org=acme`,
      `${V}/25/10/usage-report/products/dbprod/views/objects-usage-view?org=acme`,
      view('dbprod/views/objects-usage-view', 'view_type=bogus'),
      view('dbprod/views/clusters-usage-view', 'contractID=abc'),
      view('foo/views/clusters-usage-view'),
    ])
      expect({ path, status: (await get(w, path)).status }).toEqual({ path, status: 400 })
    expect((await get(w, view('backupprod/views/objects-usage-view'))).status).toBe(404)
    expect((await get(w, view('dbprod/views/clusters-usage-view', 'contractID=7'))).status).toBe(200)
    expect((await w.t.as(w.owner).get(view('dbprod/views/objects-usage-view'))).status).toBe(403)
  })

  test('10, October, october and Oct name the same month → the same body', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const bodies = await Promise.all(
      ['10', 'October', 'october', 'Oct'].map(
        async (m) => (await get(w, `${V}/2025/${m}/usage-report/products/dbprod/views/objects-usage-view?org=acme`)).body,
      ),
    )
    for (const body of bodies) expect(body).toEqual(bodies[0])
  })

  test('objects-usage-view: one item per object with usage; totals are their sum; a full day has 24 events; clusterUID filters', async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    await send(w, events)
    const { body } = await get(w, view('dbprod/views/objects-usage-view'))
    expect(body.items.map((i: Item) => i.objectID).sort()).toEqual(['my-b', 'pg-a', 'pg-edge', 'redis-c'])
    const expected = expectedUsage(events, 'dbprod').get('2025-10')!
    expect(body.totals.cpuCoreMinutes).toBeCloseTo(expected.cpuMinutes, 1)
    expect(body.items.reduce((s: number, i: Item) => s + i.usage.cpuCoreMinutes, 0)).toBeCloseTo(expected.cpuMinutes, 1)
    const pg = body.items.find((i: Item) => i.objectID === 'pg-a')
    expect(pg.dailyEventCount['2025-10-15']).toBe(24)
    expect(pg.dailyEventCount['2025-10-10']).toBe(24) // the resize's `updated` event stands in for the 12:00 heartbeat
    const my = body.items.find((i: Item) => i.objectID === 'my-b')
    expect(my.dailyEventCount['2025-10-05']).toBe(19) // silent from 03:00 to 08:00
    expect(my.dailyEventCount['2025-10-21']).toBeUndefined() // deleted the day before
    const prodOnly = (await get(w, view('dbprod/views/objects-usage-view', 'clusterUID=cluster-prod'))).body
    expect(prodOnly.items.map((i: Item) => i.objectID)).toEqual(['pg-a'])
  })

  test('gks-usage-view: one column per day of October (31); the daily matrix adds up to the totals', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const { body } = await get(w, view('dbprod/views/gks-usage-view'))
    expect(body.daily.days).toHaveLength(31)
    expect(body.daily.days[0]).toBe('2025-10-01')
    const daily = body.daily.series.flatMap((s: Item) => s.cpuCoreMinutes).reduce((a: number, b: number) => a + b, 0)
    expect(daily).toBeCloseTo(body.totals.cpuCoreMinutes, 0)
    expect(body.items.map((i: Item) => `${i.group}/${i.kind}`).sort()).toEqual([
      'kubedb.com/MySQL',
      'kubedb.com/Postgres',
      'kubedb.com/Redis',
    ])
  })

  test('namespaces-usage-view and clusters-usage-view group the same minutes differently', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const ns = (await get(w, view('dbprod/views/namespaces-usage-view'))).body
    const cl = (await get(w, view('dbprod/views/clusters-usage-view'))).body
    expect(ns.totals).toEqual(cl.totals)
    expect(cl.items.find((i: Item) => i.clusterUID === 'cluster-prod').modes).toEqual(['PROD'])
    expect(ns.items.find((i: Item) => i.namespace === 'shop').objects).toBe(1)
  })

  test('object-quota-history: an object resized from 2 to 4 cores → two runs with their start and end; an unknown object → empty segments', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const { body } = await get(w, `${V}/object-quota-history/clusters/cluster-prod/objects/pg-a?org=acme`)
    expect(body.segments).toEqual([
      { start: '2025-09-15T00:00:00Z', end: '2025-10-10T12:00:00Z', cpuCores: 2, memoryGiB: 4, clusterMode: 'PROD' },
      { start: '2025-10-10T12:00:00Z', end: '2025-11-10T00:00:00Z', cpuCores: 4, memoryGiB: 8, clusterMode: 'PROD' },
    ])
    const month = (await get(w, view('dbprod/views/object-quota-history-summaries-view/clusters/cluster-prod/objects/pg-a'))).body
    expect(month.items[0].segments.map((s: Item) => [s.start, s.end])).toEqual([
      ['2025-10-01T00:00:00Z', '2025-10-10T12:00:00Z'],
      ['2025-10-10T12:00:00Z', '2025-11-01T00:00:00Z'],
    ])
    const silence = (await get(w, `${V}/object-quota-history/clusters/cluster-staging/objects/my-b?org=acme`)).body
    // The 5 h silence on Oct 5 splits the history: 1 h after the last event, then again from the next.
    expect(silence.segments.map((s: Item) => s.end)).toEqual(['2025-10-05T03:00:00Z', '2025-10-20T12:30:00Z'])
    expect((await get(w, `${V}/object-quota-history/clusters/cluster-prod/objects/nope?org=acme`)).body.segments).toEqual([])
  })

  test("another org's objects never show in a view, even with the same uids", async () => {
    const w = await billingWorld()
    const [bob] = await w.t.users('bob')
    await makeOrg(w.t, 'globex', { owner: bob! })
    await send(w, syntheticEvents(), { org: 'globex', as: bob })
    for (const name of DB_VIEWS)
      expect({ name, items: (await get(w, view(`dbprod/views/${name}`))).body.items }).toEqual({ name, items: [] })
    expect((await get(w, `${V}/object-quota-history/clusters/cluster-prod/objects/pg-a?org=acme`)).body.segments).toEqual([])
  })
})

describe('contracts and view_type=billable', () => {
  const paid = {
    org: 'acme',
    product: 'dbprod',
    kind: 'paid',
    start: '2025-10-01T00:00:00Z',
    end: '2025-10-16T00:00:00Z',
    clusterUIDs: ['cluster-prod'],
  }

  /** Minutes of `events` inside [from, to) by the oracle, for one product. */
  const oracleBetween = (events: WireEvent[], product: string, from: string, to: string) => {
    const kept = events.filter(() => true)
    const a = expectedUsage(kept, product, Date.parse(to))
    const b = expectedUsage(kept, product, Date.parse(from))
    const month = from.slice(0, 7)
    return (a.get(month)?.cpuMinutes ?? 0) - (b.get(month)?.cpuMinutes ?? 0)
  }

  test("a paid contract on the prod cluster for Oct 1–16 → billable = the prod object's minutes in that span; total unchanged; removing it → 0", async () => {
    const w = await billingWorld()
    const all = syntheticEvents()
    await send(w, all)
    const before = (await get(w, view('dbprod/views/clusters-usage-view'))).body
    const created = await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', paid)
    expect(created.status).toBe(201)
    const contract = await created.json()
    const billable = (await get(w, view('dbprod/views/clusters-usage-view', 'view_type=billable'))).body
    const pgOnly = all.filter((e) => e.object.uid === 'pg-a')
    const expected = oracleBetween(pgOnly, 'dbprod', '2025-10-01T00:00:00Z', '2025-10-16T00:00:00Z')
    expect(billable.viewType).toBe('billable')
    expect(billable.totals.cpuCoreMinutes).toBeCloseTo(expected, 1)
    expect(billable.totals.prod.cpuCoreMonth).toBe(billable.totals.cpuCoreMonth)
    expect(billable.totals.nonProd.cpuCoreMonth).toBe(0)
    expect(billable.items.find((i: Item) => i.clusterUID === 'cluster-staging').usage.cpuCoreMinutes).toBe(0)
    expect((await get(w, view('dbprod/views/clusters-usage-view'))).body.totals).toEqual(before.totals)
    const only = (await get(w, view('dbprod/views/clusters-usage-view', `contractID=${contract.id}`))).body
    expect(only.items.map((i: Item) => i.clusterUID)).toEqual(['cluster-prod'])
    const covered = (await get(w, view('dbprod/views/contracts-usage-view'))).body
    expect(covered.items).toHaveLength(1)
    expect(covered.items[0].usage.cpuCoreMinutes).toBeCloseTo(expected, 1)
    expect((await w.t.as(w.admin).delete(`/api/v1/admin/usage/contracts/${contract.id}`)).status).toBe(204)
    expect((await get(w, view('dbprod/views/clusters-usage-view', 'view_type=billable'))).body.totals.cpuCoreMinutes).toBe(0)
  })

  test('a contract without clusterUIDs covers every cluster; events arriving after it are counted billable at once', async () => {
    const w = await billingWorld()
    await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', { ...paid, clusterUIDs: undefined, end: undefined })
    await send(w, syntheticEvents())
    const billable = (await get(w, view('dbprod/views/clusters-usage-view', 'view_type=billable'))).body
    const total = (await get(w, view('dbprod/views/clusters-usage-view'))).body
    expect(billable.totals).toEqual(total.totals)
  })

  test('an object on a cluster switching prod → staging on the 16th: PROD and NON-PROD both > 0 and add up to its total', async () => {
    const w = await billingWorld()
    const spec = { uid: 'switch', cluster: { uid: 'c-sw', name: 'sw', mode: 'prod' } }
    const mid = Date.UTC(2025, 9, 16)
    await send(w, [
      ...hourly(spec, Date.UTC(2025, 9, 1), mid, requests('2', '2Gi')),
      ...hourly({ ...spec, cluster: { ...spec.cluster, mode: 'staging' } }, mid, Date.UTC(2025, 10, 1), requests('2', '2Gi')).map((e) => ({
        ...e,
        type: 'heartbeat' as const,
      })),
    ])
    await w.t
      .as(w.admin)
      .send('POST', '/api/v1/admin/usage/contracts', { org: 'acme', product: 'dbprod', kind: 'paid', start: '2025-01-01T00:00:00Z' })
    const { body } = await get(w, view('dbprod/views/objects-cluster-mode-usage-view/clusters/c-sw/objects/switch'))
    const item = body.items[0]
    expect(item.billable.prod.cpuCoreMonth).toBeGreaterThan(0)
    expect(item.billable.nonProd.cpuCoreMonth).toBeGreaterThan(0)
    expect(item.billable.prod.cpuCoreMonth + item.billable.nonProd.cpuCoreMonth).toBeCloseTo(item.total.cpuCoreMonth, 1)
    expect(item.total.cpuCoreMinutes).toBe(2 * 31 * 24 * 60)
  })

  test('contract routes: a plain user → 403; bad start → 422; unknown org → 422; end before start → 422; deleting an unknown id → 404; list filters by org', async () => {
    const w = await billingWorld()
    expect((await w.t.as(w.owner).send('POST', '/api/v1/admin/usage/contracts', paid)).status).toBe(403)
    expect((await w.t.as(w.owner).get('/api/v1/admin/usage/contracts')).status).toBe(403)
    expect((await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', { ...paid, start: 'soon' })).status).toBe(422)
    expect((await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', { ...paid, org: 'nope' })).status).toBe(422)
    expect((await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', { ...paid, end: '2025-09-01T00:00:00Z' })).status).toBe(422)
    expect((await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', { ...paid, kind: 'gift' })).status).toBe(422)
    expect((await w.t.as(w.admin).delete('/api/v1/admin/usage/contracts/999')).status).toBe(404)
    await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', paid)
    expect(await (await w.t.as(w.admin).get('/api/v1/admin/usage/contracts?org=acme')).json()).toEqual([
      { id: expect.any(Number), ...paid, start: '2025-10-01T00:00:00Z', end: '2025-10-16T00:00:00Z' },
    ])
    expect(await (await w.t.as(w.admin).get('/api/v1/admin/usage/contracts?org=other')).json()).toEqual([])
  })
})

describe('DBaaS billing reports', () => {
  test('the org owner → 200 with each namespace; one namespace → its databases; a plain member → 403; anonymous → 401', async () => {
    const w = await billingWorld()
    const [mia] = await w.t.users('mia')
    const now = Date.now()
    const spec = { uid: 'live-db', cluster: { uid: 'c1', name: 'one' }, namespace: 'client-a' }
    await send(w, [
      event(spec, now - 3 * 3_600_000, 'created', requests('1', '1Gi')),
      event(spec, now - 2 * 3_600_000, 'heartbeat', requests('1', '1Gi')),
    ])
    const list = await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/namespaces?org=acme')
    expect(list.status).toBe(200)
    const body = await list.json()
    expect(body.namespaces).toEqual([expect.objectContaining({ org: 'acme', clusterUID: 'c1', namespace: 'client-a', databases: 1 })])
    expect(body.namespaces[0].currentMonth.cpuCoreMinutes).toBeGreaterThan(0)
    const one = await (await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/clusters/c1/namespaces/client-a?org=acme')).json()
    expect(one.clusterInfo).toEqual({ uid: 'c1', name: 'one' })
    expect(one.databases.map((d: Item) => d.databaseInfo.uid)).toEqual(['live-db'])
    await makeOrg(w.t, 'other', { owner: w.owner, members: [mia!] })
    expect((await w.t.as(mia!).get('/api/v1/dbaas/billing/reports/namespaces?org=other')).status).toBe(403)
    expect((await w.t.as(mia!).get('/api/v1/dbaas/billing/reports/namespaces?org=acme')).status).toBe(403)
    expect((await w.t.request('GET', '/api/v1/dbaas/billing/reports/namespaces?org=acme')).status).toBe(401)
  })

  test("without org, a user with no clusters of their own → an empty list, never another org's namespaces", async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const [eve] = await w.t.users('eve')
    expect(await (await w.t.as(eve!).get('/api/v1/dbaas/billing/reports/namespaces')).json()).toEqual({ org: null, namespaces: [] })
    expect(await (await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/namespaces')).json()).toEqual({ org: null, namespaces: [] })
  })

  test('without org, an owner of over 1,000 orgs sees the namespaces of their own cluster in each, the last org by name included', async () => {
    const w = await billingWorld()
    for (let i = 0; i < 1000; i++) await createOrg(w.t.deps, w.owner.user, { username: `org-${String(i).padStart(4, '0')}`, origin: 'api' })
    await makeOrg(w.t, 'zz-last', { owner: w.owner })
    const connection = {
      server: 'https://127.0.0.1:9',
      caData: '',
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'x' },
    }
    await registrationFixture(w.t, w.owner.user, 'mine', connection, 'c-own')
    const now = Date.now()
    const spec = { uid: 'db-1', cluster: { uid: 'c-own', name: 'mine' }, namespace: 'team-z' }
    expect((await send(w, [event(spec, now - 3_600_000, 'created', requests('1', '1Gi'))], { org: 'zz-last' })).status).toBe(200)
    const body = await (await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/namespaces')).json()
    expect(body.namespaces).toEqual([expect.objectContaining({ org: 'zz-last', clusterUID: 'c-own', namespace: 'team-z', databases: 1 })])
  })

  test('an object deleted over six months ago is left out', async () => {
    const w = await billingWorld()
    const old = Date.now() - 200 * 86_400_000
    const spec = { uid: 'gone', cluster: { uid: 'c1', name: 'one' }, namespace: 'old' }
    await send(w, [event(spec, old, 'created', requests('1', '1Gi')), event(spec, old + 3_600_000, 'deleted')])
    expect((await (await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/namespaces?org=acme')).json()).namespaces).toEqual([])
  })
})
