import { describe, expect, test } from 'bun:test'
import type { MonthSummary } from '../../src/usage/service'
import { batches, shuffled, syntheticEvents } from './dataset'
import { billingWorld, coreMonths, expectedUsage, send, type UsageWorld, type WireEvent } from './support'

async function summary(w: UsageWorld, product: string, query = 'period_start=2025-08&period_end=2025-12') {
  const res = await w.t.as(w.admin).get(`/api/v1/dashboard/monthly-summary/${product}?org=acme&${query}`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { months: MonthSummary[] }).months
}

/** The rows the oracle predicts, newest first, for the months the data set touches. */
function predicted(events: WireEvent[], product: string): Omit<MonthSummary, 'cpuChangeFromPrev' | 'memoryChangeFromPrev'>[] {
  const months = new Set(events.map((e) => e.time.slice(0, 7)))
  const usage = expectedUsage(events, product)
  return [...months]
    .sort()
    .reverse()
    .map((m) => {
      const u = usage.get(m) ?? { cpuMinutes: 0, memMinutes: 0, instances: 0 }
      return {
        year: Number(m.slice(0, 4)),
        month: Number(m.slice(5)),
        cpuCoreMonth: coreMonths(u.cpuMinutes),
        memoryGiBMonth: coreMonths(u.memMinutes),
        instances: u.instances,
      }
    })
}

const withoutChange = (rows: MonthSummary[]) => rows.map(({ cpuChangeFromPrev: _c, memoryChangeFromPrev: _m, ...rest }) => rest)

describe('counting rule (docs/decisions.md §5a) on a synthetic data set', () => {
  test("events sent in order, in one body → every product's months equal the minute-by-minute oracle", async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    const { status, body } = await send(w, events)
    expect(status).toBe(200)
    expect(body).toEqual({ accepted: events.length, duplicates: 0, rejected: [], rejectedCount: 0 })
    for (const product of ['dbprod', 'backupprod']) expect(withoutChange(await summary(w, product))).toEqual(predicted(events, product))
  })

  test('the same events shuffled in small batches, half as NDJSON (late events everywhere) → the same numbers', async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    for (const [i, batch] of batches(shuffled(events), 97).entries())
      expect((await send(w, batch, { ndjson: i % 2 === 1 })).body.rejected).toEqual([])
    expect(withoutChange(await summary(w, 'dbprod'))).toEqual(predicted(events, 'dbprod'))
  })

  test('every event sent twice → the second time all duplicates, numbers unchanged', async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    await send(w, events)
    const before = await summary(w, 'dbprod')
    const again = await send(w, shuffled(events, 3))
    expect(again.body).toEqual({ accepted: 0, duplicates: events.length, rejected: [], rejectedCount: 0 })
    expect(await summary(w, 'dbprod')).toEqual(before)
  })

  test('a repeat inside one body counts as a duplicate; the first copy wins', async () => {
    const w = await billingWorld()
    const [first, second] = syntheticEvents()
    const { body } = await send(w, [first, second, first])
    expect(body).toEqual({ accepted: 2, duplicates: 1, rejected: [], rejectedCount: 0 })
  })

  test('September, October, November → change from previous computed from the unrounded totals', async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    await send(w, events)
    const usage = expectedUsage(events, 'dbprod')
    const [nov, oct, sep] = await summary(w, 'dbprod')
    const pct = (cur: number, prev: number) => Math.round(((cur - prev) / prev) * 100 * 100) / 100
    expect(nov!.cpuChangeFromPrev).toBeCloseTo(pct(usage.get('2025-11')!.cpuMinutes, usage.get('2025-10')!.cpuMinutes), 2)
    expect(oct!.memoryChangeFromPrev).toBeCloseTo(pct(usage.get('2025-10')!.memMinutes, usage.get('2025-09')!.memMinutes), 2)
    expect(sep).not.toHaveProperty('cpuChangeFromPrev')
    expect(sep).not.toHaveProperty('memoryChangeFromPrev')
  })

  test('one object with 2 cores and 4 GiB all of October → 2.04 core-months, 4.08 GiB-months (744 h / 730 h)', async () => {
    const w = await billingWorld()
    const spec = { uid: 'o1', cluster: { uid: 'c1', name: 'c1' } }
    const { hourly, requests } = await import('./support')
    await send(w, hourly(spec, Date.UTC(2025, 8, 1), Date.UTC(2025, 10, 1), requests('2', '4Gi')))
    const [oct, sep] = await summary(w, 'dbprod', 'period_start=2025-09&period_end=2025-10')
    expect(oct).toEqual({
      year: 2025,
      month: 10,
      cpuCoreMonth: 2.04,
      memoryGiBMonth: 4.08,
      instances: 1,
      cpuChangeFromPrev: 3.33,
      memoryChangeFromPrev: 3.33,
    })
    expect(sep).toEqual({ year: 2025, month: 9, cpuCoreMonth: 1.97, memoryGiBMonth: 3.95, instances: 1 })
  })

  test('an object reporting up to now → the current month counts its last event only up to now (partial month)', async () => {
    const w = await billingWorld()
    const { event, requests } = await import('./support')
    const now = Date.now()
    const minute = 60_000
    const base = Math.floor(now / minute) * minute - 190 * minute
    const spec = { uid: 'live', cluster: { uid: 'c1', name: 'c1' } }
    // Events 190, 130 and 70 minutes and 10 minutes ago: 180 closed minutes and 10 open ones so far.
    const events = [0, 60, 120, 180].map((m) => event(spec, base + m * minute, m === 0 ? 'created' : 'heartbeat', requests('1000', '1Ti')))
    await send(w, events)
    const [row] = await summary(w, 'dbprod', '')
    const minutes = (Date.now() - base) / minute
    // 1000 cores: one minute is 0.0228 core-months, so a whole hour of overcount would show.
    expect(row!.cpuCoreMonth).toBeGreaterThanOrEqual(coreMonths(1000 * (minutes - 1)))
    expect(row!.cpuCoreMonth).toBeLessThanOrEqual(coreMonths(1000 * (minutes + 1)))
    expect(row!.instances).toBe(1)
  })
})
