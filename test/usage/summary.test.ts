import { describe, expect, test } from 'bun:test'
import { billingWorld, hourly, requests, send, type UsageWorld } from './support'

const get = (w: UsageWorld, path: string) => w.t.as(w.admin).get(path)
const summaryPath = (query: string, product = 'dbprod') =>
  `/api/v1/dashboard/monthly-summary/${product}?org=acme${query ? `&${query}` : ''}`

/** One object per month given (YYYY-MM), with `cores` for the first 10 days of it. */
async function seedMonths(w: UsageWorld, months: [string, number][]) {
  for (const [month, cores] of months) {
    const start = Date.parse(`${month}-01T00:00:00Z`)
    await send(
      w,
      hourly({ uid: `o-${month}`, cluster: { uid: 'c1', name: 'c1' } }, start, start + 10 * 86_400_000, requests(String(cores), '1Gi')),
    )
  }
}

describe('GET /dashboard/monthly-summary/{resourceType}', () => {
  test('no data → 200 with an empty months list, for every product', async () => {
    const w = await billingWorld()
    for (const product of ['dbprod', 'backupprod', 'secretsprod', 'ingressprod']) {
      const res = await get(w, summaryPath('', product))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ resourceType: product, months: [] })
    }
  })

  for (const query of [
    'period_start=2025-13',
    'period_start=2025-00',
    'period_start=2025-1',
    'period_start=25-01',
    'period_start=2025/01',
    'period_start=2025-01-01',
    'period_start=',
    'period_start=abcd-ef',
    'period_start=2025-01&period_end=2025-1x',
  ])
    test(`${query} → 400 naming YYYY-MM`, async () => {
      const w = await billingWorld()
      const res = await get(w, summaryPath(query))
      expect(res.status).toBe(400)
      expect((await res.json()).message).toContain('YYYY-MM')
    })

  test('unknown resourceType → 400; start after end → 400; 25 months → 400; 24 months → 200; 2000-01..2099-12 → 400 (checked as requested)', async () => {
    const w = await billingWorld()
    expect((await get(w, summaryPath('', 'foo'))).status).toBe(400)
    expect((await get(w, summaryPath('period_start=2025-06&period_end=2025-05'))).status).toBe(400)
    expect((await get(w, summaryPath('period_start=2023-01&period_end=2025-01'))).status).toBe(400)
    expect((await get(w, summaryPath('period_start=2023-01&period_end=2024-12'))).status).toBe(200)
    expect((await get(w, summaryPath('period_start=2000-01&period_end=2099-12'))).status).toBe(400)
  })

  test('period_end without period_start is ignored (even garbage) → 200 with the default window', async () => {
    const w = await billingWorld()
    expect((await get(w, summaryPath('period_end=garbage'))).status).toBe(200)
  })

  test('a period is clamped to generated months, newest first, no padding; outside them → []', async () => {
    const w = await billingWorld()
    await seedMonths(w, [
      ['2025-01', 1],
      ['2025-02', 1],
      ['2025-03', 2],
      ['2025-04', 2],
      ['2025-05', 1],
    ])
    const rows = (await (await get(w, summaryPath('period_start=2024-11&period_end=2025-03'))).json()).months
    expect(rows.map((r: { year: number; month: number }) => `${r.year}-${r.month}`)).toEqual(['2025-3', '2025-2', '2025-1'])
    expect((await (await get(w, summaryPath('period_start=2019-01&period_end=2019-06'))).json()).months).toEqual([])
  })

  test('change from previous: 1 → 2 cores is +100, 2 → 1 is −50, equal is 0; the oldest row has neither field', async () => {
    const w = await billingWorld()
    await seedMonths(w, [
      ['2025-02', 1],
      ['2025-03', 2],
      ['2025-04', 2],
      ['2025-05', 1],
    ])
    const rows = (await (await get(w, summaryPath('period_start=2025-02&period_end=2025-05'))).json()).months
    expect(rows.map((r: { cpuChangeFromPrev?: number }) => r.cpuChangeFromPrev)).toEqual([-50, 0, 100, undefined])
    expect(rows[3]).not.toHaveProperty('memoryChangeFromPrev')
  })

  test('a generated month without usage of the product → a zero row; the next month against it → 100; two zero months → 0', async () => {
    const w = await billingWorld()
    // Backup usage makes June and July generated months; dbprod has usage in August only.
    for (const month of ['2025-06', '2025-07']) {
      const start = Date.parse(`${month}-01T00:00:00Z`)
      await send(
        w,
        hourly(
          { uid: `b-${month}`, product: 'backupprod', cluster: { uid: 'c1', name: 'c1' } },
          start,
          start + 86_400_000,
          requests('1', '1Gi'),
        ),
      )
    }
    await seedMonths(w, [['2025-08', 1]])
    const rows = (await (await get(w, summaryPath('period_start=2025-06&period_end=2025-08'))).json()).months
    expect(rows).toEqual([
      { year: 2025, month: 8, cpuCoreMonth: 0.33, memoryGiBMonth: 0.33, instances: 1, cpuChangeFromPrev: 100, memoryChangeFromPrev: 100 },
      { year: 2025, month: 7, cpuCoreMonth: 0, memoryGiBMonth: 0, instances: 0, cpuChangeFromPrev: 0, memoryChangeFromPrev: 0 },
      { year: 2025, month: 6, cpuCoreMonth: 0, memoryGiBMonth: 0, instances: 0 },
    ])
  })

  test('default window: of eight generated months ending now, the six most recent', async () => {
    const w = await billingWorld()
    // "Now" is the app's clock, set mid-month so the current month has data before it whatever the real date.
    w.t.clock.set(Date.parse('2026-03-15T12:00:00Z'))
    const months = ['2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01', '2026-02', '2026-03']
    for (const month of months) {
      const start = Date.parse(`${month}-01T00:00:00Z`)
      await send(w, hourly({ uid: `o-${month}`, cluster: { uid: 'c1', name: 'c1' } }, start, start + 10 * 86_400_000, requests('1', '1Gi')))
    }
    const rows = (await (await get(w, summaryPath(''))).json()).months
    expect(rows).toHaveLength(6)
    expect(`${rows[0].year}-${String(rows[0].month).padStart(2, '0')}`).toBe('2026-03')
  })

  test('a plain user → 403; anonymous → 401; unknown org → 404; missing org → 422', async () => {
    const w = await billingWorld()
    expect((await w.t.as(w.owner).get(summaryPath(''))).status).toBe(403)
    expect((await w.t.request('GET', summaryPath(''))).status).toBe(401)
    expect((await get(w, '/api/v1/dashboard/monthly-summary/dbprod?org=nope')).status).toBe(404)
    expect((await get(w, '/api/v1/dashboard/monthly-summary/dbprod')).status).toBe(422)
  })
})

describe('GET /dashboard/summary/generated-months', () => {
  test('empty → {yearMonthList: {}}; Nov 2024, Dec 2024, Jan 2025 → full names in calendar order by year', async () => {
    const w = await billingWorld()
    expect(await (await get(w, '/api/v1/dashboard/summary/generated-months?org=acme')).json()).toEqual({ yearMonthList: {} })
    await seedMonths(w, [
      ['2025-01', 1],
      ['2024-12', 1],
      ['2024-11', 1],
    ])
    expect(await (await get(w, '/api/v1/dashboard/summary/generated-months?org=acme')).json()).toEqual({
      yearMonthList: { 2024: ['November', 'December'], 2025: ['January'] },
    })
  })

  test('a plain user → 403; anonymous → 401', async () => {
    const w = await billingWorld()
    expect((await w.t.as(w.owner).get('/api/v1/dashboard/summary/generated-months?org=acme')).status).toBe(403)
    expect((await w.t.request('GET', '/api/v1/dashboard/summary/generated-months?org=acme')).status).toBe(401)
  })
})
