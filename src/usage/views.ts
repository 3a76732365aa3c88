import { rfc3339 } from '../clock'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import type { UserRow } from '../identity/store'
import type { Executor } from '../storage/database'
import { dayOf, daysOfMonth, isoDay, type MonthKey, monthEnd, monthName, monthOf, monthStart, yearOf } from './calendar'
import {
  type Coverage,
  futureOf,
  MAX_SILENCE_MS,
  type MonthTally,
  mergeIntervals,
  type Reading,
  type Segment,
  segmentsOf,
  tallyOf,
} from './counting'
import { isProduct, type Product } from './events'
import type { UsageView } from './schemas'
import { objectDaysAt, objectMonthsAt, parsePathMonth, round2 } from './service'
import * as store from './store'

/**
 * The UsageViews of the spec (shapes are ours, documented in schemas.ts): one envelope for every
 * view, items by the view's dimension. `view_type=total` counts every minute, `billable` only
 * minutes covered by a paid contract of the org for the product, both split PROD / NON-PROD.
 */

const ViewMessages = {
  badViewType: 'view_type must be total or billable',
  badContractId: 'contractID must be a whole number',
  unknownProduct: 'product must be one of: dbprod, backupprod, secretsprod, ingressprod',
} as const

export type ViewType = 'total' | 'billable'

export interface ViewQuery {
  view_type?: string
  group?: string
  kind?: string
  clusterUID?: string
  namespace?: string
  namespaceUID?: string
  contractID?: string
}

/** Amounts of one row: core- and GiB-minutes, the same in core- and GiB-months, and the PROD / NON-PROD split. */
export interface Usage {
  cpuCoreMinutes: number
  memoryGiBMinutes: number
  cpuCoreMonth: number
  memoryGiBMonth: number
  prod: { cpuCoreMonth: number; memoryGiBMonth: number }
  nonProd: { cpuCoreMonth: number; memoryGiBMonth: number }
}

const MINUTES_PER_MONTH = 43_800
const months = (minutes: number) => round2(Math.abs(minutes) < 1e-6 ? 0 : minutes / MINUTES_PER_MONTH)
const minutes = (value: number) => round2(Math.abs(value) < 1e-6 ? 0 : value)

/** Sums month rows into one Usage, counting total or billable minutes. */
export function usageOf(rows: readonly MonthTally[], viewType: ViewType): Usage {
  let cpuProd = 0,
    cpuNonProd = 0,
    memProd = 0,
    memNonProd = 0
  for (const r of rows) {
    cpuProd += viewType === 'total' ? r.cpuProd : r.billCpuProd
    cpuNonProd += viewType === 'total' ? r.cpuNonProd : r.billCpuNonProd
    memProd += viewType === 'total' ? r.memProd : r.billMemProd
    memNonProd += viewType === 'total' ? r.memNonProd : r.billMemNonProd
  }
  return {
    cpuCoreMinutes: minutes(cpuProd + cpuNonProd),
    memoryGiBMinutes: minutes(memProd + memNonProd),
    cpuCoreMonth: months(cpuProd + cpuNonProd),
    memoryGiBMonth: months(memProd + memNonProd),
    prod: { cpuCoreMonth: months(cpuProd), memoryGiBMonth: months(memProd) },
    nonProd: { cpuCoreMonth: months(cpuNonProd), memoryGiBMonth: months(memNonProd) },
  }
}

export interface ViewContext {
  deps: Deps
  org: UserRow
  month: MonthKey
  product: Product
  viewType: ViewType
  now: number
}

/** Reads the path and query of a view route. Throws badRequest. */
export function viewContext(
  deps: Deps,
  org: UserRow,
  year: string,
  month: string,
  product: string,
  query: ViewQuery,
  now = deps.clock.now(),
): ViewContext {
  const key = parsePathMonth(year, month)
  if (!isProduct(product)) throw new AppError('badRequest', ViewMessages.unknownProduct)
  const viewType = query.view_type ?? 'total'
  if (viewType !== 'total' && viewType !== 'billable') throw new AppError('badRequest', ViewMessages.badViewType)
  if (query.contractID !== undefined && !/^\d{1,15}$/.test(query.contractID)) throw new AppError('badRequest', ViewMessages.badContractId)
  return { deps, org, month: key, product, viewType, now }
}

type UsageViewBody = typeof UsageView.static

function envelope(
  ctx: ViewContext,
  view: string,
  totals: Usage,
  items: Record<string, unknown>[],
  extra: Partial<Pick<UsageViewBody, 'daily' | 'billable'>> = {},
): UsageViewBody {
  return {
    org: ctx.org.name,
    year: yearOf(ctx.month),
    month: monthOf(ctx.month),
    monthName: monthName(ctx.month),
    product: ctx.product,
    view,
    viewType: ctx.viewType,
    unit: { cpu: 'core-month', memory: 'GiB-month', minutes: 'core-minute / GiB-minute' },
    totals,
    items,
    ...extra,
  }
}

const filterOf = (ctx: ViewContext, query: ViewQuery): store.ObjectFilter => ({
  product: ctx.product,
  group: query.group,
  kind: query.kind,
  clusterUid: query.clusterUID,
  namespace: query.namespace,
  namespaceUid: query.namespaceUID,
})

const monthRows = (ctx: ViewContext, filter: store.ObjectFilter) =>
  objectMonthsAt(ctx.deps.db.read, ctx.org.id, ctx.month, ctx.month, filter, ctx.now)

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const row of rows) {
    const k = key(row)
    const list = groups.get(k)
    if (list) list.push(row)
    else groups.set(k, [row])
  }
  return groups
}

const active = (rows: store.ObjectMonth[]) => rows.filter((r) => r.activeMs > 0)

/** objects-usage-view: each object with its usage and its daily event count. */
export async function objectsView(ctx: ViewContext, query: ViewQuery) {
  const filter = filterOf(ctx, query)
  const rows = active(await monthRows(ctx, filter))
  const days = await store.objectDays(ctx.deps.db.read, ctx.org.id, dayOf(monthStart(ctx.month)), dayOf(monthEnd(ctx.month)), filter)
  const eventsByObject = groupBy(days, (d) => String(d.objectId))
  const items = rows.map((r) => ({
    objectID: r.uid,
    name: r.name,
    group: r.apiGroup,
    kind: r.kind,
    clusterUID: r.clusterUid,
    clusterName: r.clusterName,
    namespace: r.namespace,
    namespaceUID: r.namespaceUid,
    usage: usageOf([r], ctx.viewType),
    eventCount: r.events,
    dailyEventCount: Object.fromEntries(
      (eventsByObject.get(String(r.id)) ?? [])
        .filter((d) => d.events > 0)
        .sort((a, b) => a.day - b.day)
        .map((d) => [isoDay(d.day), d.events]),
    ),
  }))
  return envelope(ctx, 'objects', usageOf(rows, ctx.viewType), items)
}

/** clusters-usage-view: each cluster; with contractID, only the clusters bound to that contract. */
export async function clustersView(ctx: ViewContext, query: ViewQuery) {
  const filter = filterOf(ctx, { group: query.group, kind: query.kind })
  if (query.contractID !== undefined) {
    const contract = (await store.listContracts(ctx.deps.db.read, ctx.org.id, ctx.product)).find((c) => c.id === Number(query.contractID))
    filter.clusterUids = contract ? (contract.clusterUids ?? undefined) : []
  }
  const rows = active(await monthRows(ctx, filter))
  const items = [...groupBy(rows, (r) => r.clusterUid)].map(([uid, list]) => ({
    clusterUID: uid,
    clusterName: list[list.length - 1]!.clusterName,
    modes: modesOf(list),
    objects: list.length,
    usage: usageOf(list, ctx.viewType),
  }))
  return envelope(ctx, 'clusters', usageOf(rows, ctx.viewType), items)
}

function modesOf(rows: readonly store.ObjectMonth[]): ('PROD' | 'NON-PROD')[] {
  const modes: ('PROD' | 'NON-PROD')[] = []
  if (rows.some((r) => r.cpuProd > 0 || r.memProd > 0)) modes.push('PROD')
  if (rows.some((r) => r.cpuNonProd > 0 || r.memNonProd > 0)) modes.push('NON-PROD')
  return modes
}

/** namespaces-usage-view: each namespace of each cluster. */
export async function namespacesView(ctx: ViewContext, query: ViewQuery) {
  const rows = active(await monthRows(ctx, filterOf(ctx, { clusterUID: query.clusterUID })))
  const items = [...groupBy(rows, (r) => `${r.clusterUid}\u0000${r.namespaceUid}`)].map(([, list]) => ({
    clusterUID: list[0]!.clusterUid,
    namespace: list[0]!.namespace,
    namespaceUID: list[0]!.namespaceUid,
    objects: list.length,
    usage: usageOf(list, ctx.viewType),
  }))
  return envelope(ctx, 'namespaces', usageOf(rows, ctx.viewType), items)
}

/** gks-usage-view: each group/kind, and the daily matrix (one column per day of the month). */
export async function gksView(ctx: ViewContext, query: ViewQuery) {
  const filter = filterOf(ctx, { clusterUID: query.clusterUID })
  const rows = active(await monthRows(ctx, filter))
  const dayList = daysOfMonth(ctx.month)
  const days = await objectDaysAt(ctx.deps.db.read, ctx.org.id, dayList[0]!, dayList[dayList.length - 1]! + 1, filter, ctx.now)
  const kindOf = new Map(rows.map((r) => [r.id, `${r.apiGroup}/${r.kind}`]))
  const groups = [...groupBy(rows, (r) => `${r.apiGroup}/${r.kind}`)]
  const items = groups.map(([, list]) => ({
    group: list[0]!.apiGroup,
    kind: list[0]!.kind,
    clusters: new Set(list.map((r) => r.clusterUid)).size,
    objects: list.length,
    usage: usageOf(list, ctx.viewType),
  }))
  const series = groups.map(([key, list]) => {
    const cpu = new Array<number>(dayList.length).fill(0)
    const mem = new Array<number>(dayList.length).fill(0)
    for (const d of days) {
      if (kindOf.get(d.objectId) !== key) continue
      const i = d.day - dayList[0]!
      cpu[i]! += ctx.viewType === 'total' ? d.cpu : d.billCpu
      mem[i]! += ctx.viewType === 'total' ? d.mem : d.billMem
    }
    return { group: list[0]!.apiGroup, kind: list[0]!.kind, cpuCoreMinutes: cpu.map(minutes), memoryGiBMinutes: mem.map(minutes) }
  })
  return envelope(ctx, 'gks', usageOf(rows, ctx.viewType), items, { daily: { days: dayList.map(isoDay), series } })
}

/** Readings of an object that can shape segments inside [from, to): 2 h of lead and trail are enough. */
async function readingsAround(db: Executor, objectId: number, from: number, to: number): Promise<Reading[]> {
  return store.readingsOf(db, objectId, from - MAX_SILENCE_MS, to + MAX_SILENCE_MS)
}

/** contracts-usage-view: each contract of the org for the product that runs in the month, with the usage it covers. */
export async function contractsView(ctx: ViewContext) {
  const db = ctx.deps.db.read
  const from = monthStart(ctx.month)
  const to = monthEnd(ctx.month)
  const contracts = (await store.listContracts(db, ctx.org.id, ctx.product)).filter((c) => c.startAt < to && (c.endAt ?? Infinity) > from)
  const objects = contracts.length === 0 ? [] : await store.objectsOf(db, ctx.org.id, { product: ctx.product })
  const readings = new Map<number, Reading[]>()
  for (const o of objects)
    if (o.lastAt >= from - MAX_SILENCE_MS && o.firstAt < to) readings.set(o.id, await readingsAround(db, o.id, from, to))
  const items = contracts.map((c) => {
    const rows: MonthTally[] = []
    const coverage: Coverage = mergeIntervals([[c.startAt, c.endAt ?? Infinity]])
    for (const o of objects) {
      const list = readings.get(o.id)
      if (!list || (c.clusterUids !== null && !c.clusterUids.includes(o.clusterUid))) continue
      const tally = tallyOf(list, coverage)
      if (list[list.length - 1]!.at === o.lastAt)
        for (const [m, d] of futureOf(store.tailOf(o), ctx.now, coverage).months) addInto(tally.months, m, d)
      const row = tally.months.get(ctx.month)
      if (row && row.activeMs > 0) rows.push(row)
    }
    // Minutes the contract covers: billable when it is paid, free otherwise.
    const covered = rows.map((r) => ({
      ...r,
      cpuProd: r.billCpuProd,
      cpuNonProd: r.billCpuNonProd,
      memProd: r.billMemProd,
      memNonProd: r.billMemNonProd,
    }))
    return {
      contractID: c.id,
      kind: c.kind,
      start: rfc3339(c.startAt),
      end: c.endAt === null ? null : rfc3339(c.endAt),
      clusterUIDs: c.clusterUids,
      objects: covered.filter((r) => r.activeMs > 0).length,
      usage: usageOf(covered, 'total'),
    }
  })
  return envelope(ctx, 'contracts', usageOf(await monthRows(ctx, { product: ctx.product }), ctx.viewType), items)
}

function addInto(months: Map<MonthKey, MonthTally>, month: MonthKey, delta: MonthTally): void {
  const row = months.get(month)
  if (!row) return
  for (const key of Object.keys(delta) as (keyof MonthTally)[]) row[key] += delta[key]
}

/** Constant-resource runs of an object: consecutive segments with the same resources and mode joined. */
function quotaRuns(segments: readonly Segment[], from: number, to: number, now: number) {
  const runs: { start: number; end: number; cpuMillis: number; memoryBytes: number; prod: boolean }[] = []
  for (const s of segments) {
    const start = Math.max(s.start, from)
    const end = Math.min(s.open ? Math.min(s.end, now) : s.end, to)
    if (end <= start) continue
    const last = runs[runs.length - 1]
    if (last && last.end === start && last.cpuMillis === s.cpuMillis && last.memoryBytes === s.memoryBytes && last.prod === s.prod)
      last.end = end
    else runs.push({ start, end, cpuMillis: s.cpuMillis, memoryBytes: s.memoryBytes, prod: s.prod })
  }
  return runs.map((r) => ({
    start: rfc3339(r.start),
    end: rfc3339(r.end),
    cpuCores: r.cpuMillis / 1000,
    memoryGiB: round2((r.memoryBytes / 1024 ** 3) * 1000) / 1000,
    clusterMode: r.prod ? 'PROD' : 'NON-PROD',
  }))
}

/** object-quota-history(-summaries) of the month: each object's resource runs within the month. */
export async function quotaHistoryView(ctx: ViewContext, one?: { clusterUID: string; objectID: string }) {
  const db = ctx.deps.db.read
  const from = monthStart(ctx.month)
  const to = monthEnd(ctx.month)
  const rows = active(await monthRows(ctx, { product: ctx.product, clusterUid: one?.clusterUID, objectUid: one?.objectID }))
  const items = []
  for (const r of rows) {
    const segments = segmentsOf(await readingsAround(db, r.id, from, to))
    items.push({
      objectID: r.uid,
      name: r.name,
      group: r.apiGroup,
      kind: r.kind,
      clusterUID: r.clusterUid,
      namespace: r.namespace,
      segments: quotaRuns(segments, from, to, ctx.now),
      usage: usageOf([r], ctx.viewType),
    })
  }
  return envelope(ctx, 'object-quota-history-summaries', usageOf(rows, ctx.viewType), items)
}

/** objects-cluster-mode-usage-view: each object's PROD and NON-PROD usage, total and billable. */
export async function clusterModeView(ctx: ViewContext, one?: { clusterUID: string; objectID: string }) {
  const rows = active(await monthRows(ctx, { product: ctx.product, clusterUid: one?.clusterUID, objectUid: one?.objectID }))
  const items = rows.map((r) => ({
    objectID: r.uid,
    name: r.name,
    kind: r.kind,
    clusterUID: r.clusterUid,
    clusterName: r.clusterName,
    total: usageOf([r], 'total'),
    billable: usageOf([r], 'billable'),
  }))
  return envelope(ctx, 'objects-cluster-mode', usageOf(rows, ctx.viewType), items, { billable: usageOf(rows, 'billable') })
}

/** GET /dashboard/summary/object-quota-history/…: an object's whole resource history (empty when unknown). */
export async function objectQuotaHistory(deps: Deps, org: UserRow, clusterUID: string, objectID: string, now = deps.clock.now()) {
  const db = deps.db.read
  const [object] = await store.objectsOf(db, org.id, { clusterUid: clusterUID, objectUid: objectID })
  if (!object) return { org: org.name, clusterUID, objectID, name: null, product: null, segments: [] }
  const segments = segmentsOf(await store.readingsOf(db, object.id))
  return {
    org: org.name,
    clusterUID,
    objectID,
    name: object.name,
    product: object.product,
    group: object.apiGroup,
    kind: object.kind,
    namespace: object.namespace,
    segments: quotaRuns(segments, -Infinity, Infinity, now),
  }
}
