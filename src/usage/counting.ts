import { DAY_MS, dayOf, HOUR_MS, type MonthKey, monthKeyAt } from './calendar'

/**
 * The counting rule of docs/decisions.md §5a, as pure functions over one object's readings (its events in
 * time order): an event with resources opens a segment until the next event, at most 2 h (a longer
 * silence closes it 1 h after the event); `deleted` opens none; the last event's segment runs to
 * `min(time + 1 h, now)`. Segments are cut at UTC day (hence month) boundaries and weighed in
 * core-minutes and GiB-minutes, requests else limits (settled when the event is read).
 */

/** Order of event types at one instant: a `deleted` closes what the others opened. */
export const TYPE_RANK = { created: 0, updated: 1, heartbeat: 2, deleted: 3 } as const
export type EventType = keyof typeof TYPE_RANK
export const DELETED_RANK = TYPE_RANK.deleted

export const MAX_SILENCE_MS = 2 * HOUR_MS
const GIB = 1024 ** 3

export interface Reading {
  at: number
  rank: number
  /** null: the event carried no resources and opens no segment. */
  cpuMillis: number | null
  memoryBytes: number | null
  prod: boolean
}

export interface Segment {
  start: number
  end: number
  cpuMillis: number
  memoryBytes: number
  prod: boolean
  /** Opened by the last reading: its end is provisional (start + 1 h), clipped at "now" on read. */
  open: boolean
}

export const compareReadings = (a: Pick<Reading, 'at' | 'rank'>, b: Pick<Reading, 'at' | 'rank'>) => a.at - b.at || a.rank - b.rank

const opensSegment = (r: Reading) => r.rank !== DELETED_RANK && r.cpuMillis !== null && r.memoryBytes !== null

/** The segments the readings from index `from` open; `readings` are in time order. */
export function segmentsOf(readings: readonly Reading[], from = 0): Segment[] {
  const segments: Segment[] = []
  for (let i = from; i < readings.length; i++) {
    const r = readings[i]!
    if (!opensSegment(r)) continue
    const next = readings[i + 1]
    const end = next === undefined ? r.at + HOUR_MS : next.at - r.at <= MAX_SILENCE_MS ? next.at : r.at + HOUR_MS
    if (end > r.at)
      segments.push({ start: r.at, end, cpuMillis: r.cpuMillis!, memoryBytes: r.memoryBytes!, prod: r.prod, open: next === undefined })
  }
  return segments
}

/** Paid-contract time covering one object's cluster, as merged [start, end) intervals. */
export type Coverage = readonly (readonly [number, number])[]

/** Milliseconds of [start, end) inside the coverage. */
function coveredMs(coverage: Coverage, start: number, end: number): number {
  let total = 0
  for (const [from, to] of coverage) total += Math.max(0, Math.min(end, to) - Math.max(start, from))
  return total
}

/** Merges intervals into sorted, disjoint ones. */
export function mergeIntervals(intervals: (readonly [number, number])[]): Coverage {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0])
  const merged: [number, number][] = []
  for (const [from, to] of sorted) {
    const last = merged[merged.length - 1]
    if (last && from <= last[1]) last[1] = Math.max(last[1], to)
    else merged.push([from, to])
  }
  return merged
}

export interface MonthTally {
  activeMs: number
  events: number
  cpuProd: number
  cpuNonProd: number
  memProd: number
  memNonProd: number
  billCpuProd: number
  billCpuNonProd: number
  billMemProd: number
  billMemNonProd: number
}

export interface DayTally {
  activeMs: number
  events: number
  cpu: number
  mem: number
  billCpu: number
  billMem: number
}

/** What a set of segments and events adds to an object's months and days (a negative sign takes away). */
export interface Tally {
  months: Map<MonthKey, MonthTally>
  days: Map<number, DayTally>
}

const emptyTally = (): Tally => ({ months: new Map(), days: new Map() })

const zeroMonth = (): MonthTally => ({
  activeMs: 0,
  events: 0,
  cpuProd: 0,
  cpuNonProd: 0,
  memProd: 0,
  memNonProd: 0,
  billCpuProd: 0,
  billCpuNonProd: 0,
  billMemProd: 0,
  billMemNonProd: 0,
})
const zeroDay = (): DayTally => ({ activeMs: 0, events: 0, cpu: 0, mem: 0, billCpu: 0, billMem: 0 })

function monthTally(tally: Tally, month: MonthKey): MonthTally {
  let row = tally.months.get(month)
  if (!row) tally.months.set(month, (row = zeroMonth()))
  return row
}

function dayTally(tally: Tally, day: number): DayTally {
  let row = tally.days.get(day)
  if (!row) tally.days.set(day, (row = zeroDay()))
  return row
}

/** Adds `sign` × [start, end) of a segment, cut at UTC day boundaries, to the tally. */
function addSpan(tally: Tally, segment: Segment, start: number, end: number, coverage: Coverage, sign: 1 | -1): void {
  for (let from = start; from < end; ) {
    const to = Math.min(end, (dayOf(from) + 1) * DAY_MS)
    const ms = to - from
    const covered = coverage.length === 0 ? 0 : coveredMs(coverage, from, to)
    const cores = segment.cpuMillis / 1000
    const gib = segment.memoryBytes / GIB
    const cpu = sign * cores * (ms / 60_000)
    const mem = sign * gib * (ms / 60_000)
    const billCpu = sign * cores * (covered / 60_000)
    const billMem = sign * gib * (covered / 60_000)
    const month = monthTally(tally, monthKeyAt(from))
    month.activeMs += sign * ms
    if (segment.prod) {
      month.cpuProd += cpu
      month.memProd += mem
      month.billCpuProd += billCpu
      month.billMemProd += billMem
    } else {
      month.cpuNonProd += cpu
      month.memNonProd += mem
      month.billCpuNonProd += billCpu
      month.billMemNonProd += billMem
    }
    const day = dayTally(tally, dayOf(from))
    day.activeMs += sign * ms
    day.cpu += cpu
    day.mem += mem
    day.billCpu += billCpu
    day.billMem += billMem
    from = to
  }
}

/** Counts events per day and month. */
function addEvents(tally: Tally, readings: readonly Reading[]): void {
  for (const r of readings) {
    monthTally(tally, monthKeyAt(r.at)).events++
    dayTally(tally, dayOf(r.at)).events++
  }
}

/** Everything an object's full history contributes (open segment counted to its provisional end). */
export function tallyOf(readings: readonly Reading[], coverage: Coverage): Tally {
  const tally = emptyTally()
  for (const s of segmentsOf(readings)) addSpan(tally, s, s.start, s.end, coverage, 1)
  addEvents(tally, readings)
  return tally
}

/**
 * What appending `added` (all later than `tail`, the object's last stored reading) changes: the
 * tail's provisional segment is taken back and its real one added, then the new segments.
 */
export function tallyOfAppend(tail: Reading, added: readonly Reading[], coverage: Coverage): Tally {
  const tally = emptyTally()
  for (const s of segmentsOf([tail])) addSpan(tally, s, s.start, s.end, coverage, -1)
  for (const s of segmentsOf([tail, ...added])) addSpan(tally, s, s.start, s.end, coverage, 1)
  addEvents(tally, added)
  return tally
}

/**
 * The part of an object's open segment that lies after `now`: stored integrals count the last
 * segment to its provisional end, and a read takes this part away (the current month is partial).
 */
export function futureOf(tail: Reading, now: number, coverage: Coverage): Tally {
  const tally = emptyTally()
  const [open] = segmentsOf([tail])
  if (open && open.end > now) addSpan(tally, open, Math.max(open.start, now), open.end, coverage, -1)
  return tally
}
