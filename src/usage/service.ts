import type { Deps } from '../deps'
import { AppError } from '../errors'
import type { UserRow } from '../identity/store'
import { findOrgByName } from '../orgs/store'
import type { Executor } from '../storage/database'
import {
  addMonths,
  HOUR_MS,
  MONTH_MINUTES,
  type MonthKey,
  monthKey,
  monthKeyAt,
  monthName,
  monthOf,
  monthsBetween,
  parseMonthWord,
  parseYearMonth,
  yearOf,
} from './calendar'
import { type Coverage, type DayTally, futureOf, type MonthTally, mergeIntervals, type Tally } from './counting'
import { isProduct, PRODUCTS, type Product } from './events'
import { PDF_PRINTER } from './pdf/printer'
import { buildMonthlyReport, renderReportHtml, reportFooter } from './pdf/report'
import * as store from './store'

const Messages = {
  orgNotFound: 'organization does not exist',
  unknownProduct: `resourceType must be one of: ${PRODUCTS.join(', ')}`,
  badYearMonth: (name: string) => `${name} must be YYYY-MM with a month 01-12`,
  startAfterEnd: 'period_start is after period_end',
  rangeTooLong: 'the period spans more than 24 months',
} as const

const MAX_PERIOD_MONTHS = 24
const DEFAULT_WINDOW_MONTHS = 6

/** The org named by the `org` query of a usage route. Throws notFound. */
export async function usageOrg(deps: Deps, name: string): Promise<UserRow> {
  const org = await findOrgByName(deps.db.read, name)
  if (!org) throw new AppError('notFound', Messages.orgNotFound)
  return org
}

/** Rounds for display: two decimals (docs/decisions.md §5). */
export const round2 = (value: number) => Math.round((value + Number.EPSILON) * 100) / 100
/** Sums of floats that should cancel leave dust; below a micro-unit it is zero. */
const settle = (value: number) => (Math.abs(value) < 1e-6 ? 0 : value)

/** Change from the previous row in percent: 0 when both are 0, 100 when only the previous is (docs/decisions.md §5). */
export function changeFromPrevious(current: number, previous: number): number {
  const cur = settle(current)
  const prev = settle(previous)
  if (prev === 0) return cur === 0 ? 0 : 100
  return round2(((cur - prev) / prev) * 100)
}

export const toCoreMonths = (coreMinutes: number) => round2(settle(coreMinutes) / MONTH_MINUTES)

/** Looks up the paid coverage of an org's clusters per product. */
async function coverageFor(db: Executor, orgId: number): Promise<(product: string, clusterUid: string) => Coverage> {
  const contracts = await store.listContracts(db, orgId)
  return (product, clusterUid) =>
    mergeIntervals(
      contracts
        .filter((c) => c.kind === 'paid' && c.product === product && (c.clusterUids === null || c.clusterUids.includes(clusterUid)))
        .map((c) => [c.startAt, c.endAt ?? Infinity] as const),
    )
}

/** How rows of one granularity (months or days) meet a tally: which object and period a row is, and how a delta adds. */
interface Granularity<Row, Delta> {
  keyOf: (row: Row) => string
  periodsOf: (tally: Tally) => Map<number, Delta>
  add: (row: Row, delta: Delta) => void
}

const MONTHS: Granularity<store.ObjectMonth, MonthTally> = {
  keyOf: (r) => `${r.id}:${r.month}`,
  periodsOf: (tally) => tally.months,
  add: (row, delta) => {
    for (const key of Object.keys(delta) as (keyof MonthTally)[]) row[key] += delta[key]
  },
}

const DAYS: Granularity<store.ObjectDay, DayTally> = {
  keyOf: (r) => `${r.objectId}:${r.day}`,
  periodsOf: (tally) => tally.days,
  add: (row, delta) => {
    for (const key of Object.keys(delta) as (keyof DayTally)[]) row[key] += delta[key]
  },
}

/**
 * Stored rows count each object's last segment to its provisional end; the part after `now` is
 * taken away here (the current month or day is partial).
 */
async function asOf<Row, Delta>(
  db: Executor,
  orgId: number,
  filter: store.ObjectFilter,
  now: number,
  rows: Row[],
  granularity: Granularity<Row, Delta>,
): Promise<Row[]> {
  const recent = await store.recentObjects(db, orgId, now - HOUR_MS, filter)
  if (recent.length === 0) return rows
  const coverageOf = await coverageFor(db, orgId)
  const byKey = new Map(rows.map((r) => [granularity.keyOf(r), r]))
  for (const object of recent) {
    const future = futureOf(store.tailOf(object), now, coverageOf(object.product, object.clusterUid))
    for (const [period, delta] of granularity.periodsOf(future)) {
      const row = byKey.get(`${object.id}:${period}`)
      if (row) granularity.add(row, delta)
    }
  }
  return rows
}

/** Month rows of the org's objects as of `now` (see asOf). */
export async function objectMonthsAt(
  db: Executor,
  orgId: number,
  from: MonthKey,
  to: MonthKey,
  filter: store.ObjectFilter,
  now: number,
): Promise<store.ObjectMonth[]> {
  return asOf(db, orgId, filter, now, await store.objectMonths(db, orgId, from, to, filter), MONTHS)
}

/** Day rows as of `now` (see asOf). */
export async function objectDaysAt(
  db: Executor,
  orgId: number,
  fromDay: number,
  toDay: number,
  filter: store.ObjectFilter,
  now: number,
): Promise<store.ObjectDay[]> {
  return asOf(db, orgId, filter, now, await store.objectDays(db, orgId, fromDay, toDay, filter), DAYS)
}

export const totalCpu = (r: MonthTally) => r.cpuProd + r.cpuNonProd
export const totalMem = (r: MonthTally) => r.memProd + r.memNonProd

export interface MonthlySummaryQuery {
  period_start?: string
  period_end?: string
}

/** One row of MonthlySummaryResponse. */
export interface MonthSummary {
  year: number
  month: number
  cpuCoreMonth: number
  memoryGiBMonth: number
  instances: number
  cpuChangeFromPrev?: number
  memoryChangeFromPrev?: number
}

/**
 * The window of a monthly summary: as given (checked as requested, before clamping) or the six
 * months ending with the current one. Throws badRequest.
 */
function summaryWindow(query: MonthlySummaryQuery, now: number): { from: MonthKey; to: MonthKey } {
  const current = monthKeyAt(now)
  if (query.period_start === undefined) return { from: addMonths(current, 1 - DEFAULT_WINDOW_MONTHS), to: current }
  const from = parseYearMonth(query.period_start)
  if (from === undefined) throw new AppError('badRequest', Messages.badYearMonth('period_start'))
  const to = query.period_end === undefined ? current : parseYearMonth(query.period_end)
  if (to === undefined) throw new AppError('badRequest', Messages.badYearMonth('period_end'))
  if (from > to) throw new AppError('badRequest', Messages.startAfterEnd)
  if (monthsBetween(from, to) > MAX_PERIOD_MONTHS) throw new AppError('badRequest', Messages.rangeTooLong)
  return { from, to }
}

/** Totals of one product per month (core-minutes, GiB-minutes, instances) for the whole org. */
async function productMonthTotals(db: Executor, orgId: number, product: Product, from: MonthKey, to: MonthKey, now: number) {
  const totals = new Map<MonthKey, { cpu: number; mem: number; instances: number }>()
  for (const row of await objectMonthsAt(db, orgId, from, to, { product }, now)) {
    let t = totals.get(row.month)
    if (!t) totals.set(row.month, (t = { cpu: 0, mem: 0, instances: 0 }))
    t.cpu += totalCpu(row)
    t.mem += totalMem(row)
    if (row.activeMs > 0) t.instances++
  }
  return totals
}

/**
 * GET /dashboard/monthly-summary/{resourceType}: generated months of the window, newest first,
 * each with the change from the next older row returned. Throws badRequest.
 */
export async function monthlySummary(
  deps: Deps,
  org: UserRow,
  resourceType: string,
  query: MonthlySummaryQuery,
  now = deps.clock.now(),
): Promise<{ resourceType: string; months: MonthSummary[] }> {
  if (!isProduct(resourceType)) throw new AppError('badRequest', Messages.unknownProduct)
  const { from, to } = summaryWindow(query, now)
  const db = deps.db.read
  const months = (await store.generatedMonths(db, org.id)).filter((m) => m >= from && m <= to).reverse()
  const totals = await productMonthTotals(db, org.id, resourceType, from, to, now)
  const zero = { cpu: 0, mem: 0, instances: 0 }
  const rows = months.map((month, i): MonthSummary => {
    const t = totals.get(month) ?? zero
    const row: MonthSummary = {
      year: yearOf(month),
      month: monthOf(month),
      cpuCoreMonth: toCoreMonths(t.cpu),
      memoryGiBMonth: toCoreMonths(t.mem),
      instances: t.instances,
    }
    const older = months[i + 1]
    if (older !== undefined) {
      const prev = totals.get(older) ?? zero
      row.cpuChangeFromPrev = changeFromPrevious(t.cpu, prev.cpu)
      row.memoryChangeFromPrev = changeFromPrevious(t.mem, prev.mem)
    }
    return row
  })
  return { resourceType, months: rows }
}

/** GET /dashboard/summary/generated-months: months with any event, by year, in calendar order. */
export async function generatedMonthList(deps: Deps, org: UserRow): Promise<{ yearMonthList: Record<string, string[]> }> {
  const list: Record<string, string[]> = {}
  for (const month of await store.generatedMonths(deps.db.read, org.id)) (list[String(yearOf(month))] ??= []).push(monthName(month))
  return { yearMonthList: list }
}

const PathMessages = {
  badYear: 'year must be four digits',
  badMonth: 'month must be 1-12 (with or without a leading zero), an English month name or its three-letter abbreviation',
} as const

/** `{year}/{month}` of a path (docs/decisions.md §5). Throws badRequest. */
export function parsePathMonth(year: string, month: string): MonthKey {
  if (!/^\d{4}$/.test(year)) throw new AppError('badRequest', PathMessages.badYear)
  const m = parseMonthWord(month)
  if (m === undefined) throw new AppError('badRequest', PathMessages.badMonth)
  return monthKey(Number(year), m)
}

/**
 * GET /dashboard/summary/{year}/{month}/download: the month's report as a PDF (an empty month says
 * so). The month is gathered only once the report has its place in the printer's line. Throws
 * badRequest (year, month), unavailable (the line is full, or the render failed: logged with
 * `requestId`).
 */
export async function monthlyReportPdf(
  deps: Deps,
  org: UserRow,
  path: { year: string; month: string },
  requestId?: string,
  now = deps.clock.now(),
): Promise<{ pdf: Uint8Array; filename: string }> {
  const key = parsePathMonth(path.year, path.month)
  const pdf = await deps.runtimes.of(PDF_PRINTER).admit(requestId, async (print) => {
    const report = await buildMonthlyReport(deps, org, key, now)
    return print(renderReportHtml(report), { footerHtml: reportFooter(report) })
  })
  return { pdf, filename: `usage-${org.name}-${yearOf(key)}-${String(monthOf(key)).padStart(2, '0')}.pdf` }
}
