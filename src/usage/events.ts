import { type EventType, TYPE_RANK } from './counting'
import { parseCpuMillis, parseMemoryBytes } from './quantity'

/** Product identifiers of the spec. */
export const PRODUCTS = ['dbprod', 'backupprod', 'secretsprod', 'ingressprod'] as const
export type Product = (typeof PRODUCTS)[number]
export const isProduct = (value: unknown): value is Product => (PRODUCTS as readonly unknown[]).includes(value)

/**
 * A usage event as read and checked (docs/decisions.md §5a), times in Unix ms. Flat, and a counting
 * Reading as it is: ingestion makes millions of these.
 */
export interface UsageEvent {
  at: number
  type: EventType
  rank: number
  product: Product
  clusterUid: string
  clusterName: string
  /** The cluster's mode is `prod`. */
  prod: boolean
  namespaceUid: string
  namespace: string
  group: string
  kind: string
  name: string
  uid: string
  /** Requests, else limits; null when the event carries no resources (only `deleted` may). */
  cpuMillis: number | null
  memoryBytes: number | null
}

/** Accepted event times (docs/decisions.md §5a): from 2000-01-01 to a day ahead of our clock (agents' clocks drift). */
const EARLIEST_EVENT_MS = Date.UTC(2000, 0, 1)
const MAX_AHEAD_MS = 24 * 3_600_000
const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?(?:Z|([+-])(\d\d):(\d\d))$/i
const MAX_TEXT = 253

type Record_ = Record<string, unknown>
const isRecord = (value: unknown): value is Record_ => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A field problem: the message names the field, for `rejected[].message`. Not an Error: it never
 * leaves readEvent, and a stack trace per bad event was most of the cost of a body of bad events.
 */
class BadField {
  constructor(readonly message: string) {}
}

function text(parent: Record_, key: string, path: string, opts: { empty?: boolean } = {}): string {
  const value = parent[key]
  if (typeof value !== 'string') throw new BadField(`${path}.${key} must be a string`)
  if (!opts.empty && value === '') throw new BadField(`${path}.${key} must not be empty`)
  if (value.length > MAX_TEXT) throw new BadField(`${path}.${key} is longer than ${MAX_TEXT} characters`)
  return value
}

function record(parent: Record_, key: string, path = ''): Record_ {
  const value = parent[key]
  if (!isRecord(value)) throw new BadField(`${path}${key} must be an object`)
  return value
}

/**
 * Memo of parsed texts: agents report on the same instants and the same few quantities, and
 * parsing is most of the cost of reading an event (ingestion reads millions). Bounded: emptied
 * when full.
 */
function memo<T>(parse: (text: string) => T, limit = 100_000): (text: string) => T {
  const cache = new Map<string, T>()
  return (text) => {
    let value = cache.get(text)
    if (value === undefined && !cache.has(text)) {
      value = parse(text)
      if (cache.size >= limit) cache.clear()
      cache.set(text, value)
    }
    return value as T
  }
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * Unix ms of an RFC 3339 date-time; NaN when a field is out of its calendar range (`2025-02-30`,
 * hour 24, a leap second: Date.parse would roll them over into another instant); undefined when
 * the text is not of the form at all.
 */
function parseInstant(text: string): number | undefined {
  const m = RFC3339.exec(text)
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const [sign, offsetHours, offsetMinutes] = [m[8], Number(m[9] ?? 0), Number(m[10] ?? 0)]
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Number.NaN
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return Number.NaN
  const fraction = m[7] ? Math.floor(Number(m[7]) * 1000) : 0
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offsetMs
}

const parseTime = memo(parseInstant)
const cpuOf = memo((text: string) => parseCpuMillis(text))
const memoryOf = memo((text: string) => parseMemoryBytes(text))

function time(value: unknown, now: number): number {
  const at = typeof value === 'string' ? parseTime(value) : undefined
  if (at === undefined) throw new BadField('time must be an RFC 3339 date-time, e.g. 2025-10-01T00:00:00Z')
  if (Number.isNaN(at)) throw new BadField('time is not a real calendar date-time')
  if (at < EARLIEST_EVENT_MS) throw new BadField('time is before 2000-01-01')
  if (at > now + MAX_AHEAD_MS) throw new BadField('time is more than a day in the future')
  return at
}

/** CPU and memory of the whole object: requests, each falling back to limits (docs/decisions.md §5a). */
function resources(event: Record_, type: EventType): { cpuMillis: number | null; memoryBytes: number | null } {
  if (event.resources === undefined && type === 'deleted') return { cpuMillis: null, memoryBytes: null }
  const res = record(event, 'resources')
  const requests = res.requests === undefined ? {} : record(res, 'requests', 'resources.')
  const limits = res.limits === undefined ? {} : record(res, 'limits', 'resources.')
  const pick = (name: 'cpu' | 'memory', parse: (v: unknown) => number | undefined): number => {
    const [where, raw] = requests[name] !== undefined ? ['requests', requests[name]] : ['limits', limits[name]]
    if (raw === undefined) throw new BadField(`resources.requests.${name} (or resources.limits.${name}) is required`)
    const value = parse(raw)
    if (value === undefined)
      throw new BadField(`resources.${where}.${name} is not a Kubernetes quantity: ${JSON.stringify(raw).slice(0, 40)}`)
    return value
  }
  return {
    cpuMillis: pick('cpu', quantityWith(cpuOf, parseCpuMillis)),
    memoryBytes: pick('memory', quantityWith(memoryOf, parseMemoryBytes)),
  }
}

const quantityWith = (memoized: (text: string) => number | undefined, parse: (value: unknown) => number | undefined) => (value: unknown) =>
  typeof value === 'string' ? memoized(value) : parse(value)

/** Reads one event; a string is the reason it is rejected. */
export function readEvent(value: unknown, now: number): UsageEvent | string {
  try {
    if (!isRecord(value)) throw new BadField('an event must be a JSON object')
    const at = time(value.time, now)
    const type = value.type
    if (typeof type !== 'string' || !(type in TYPE_RANK)) throw new BadField(`type must be one of: ${Object.keys(TYPE_RANK).join(', ')}`)
    const eventType = type as EventType
    if (!isProduct(value.product)) throw new BadField(`product must be one of: ${PRODUCTS.join(', ')}`)
    const cluster = record(value, 'cluster')
    const mode = cluster.mode
    if (mode !== undefined && mode !== null && typeof mode !== 'string') throw new BadField('cluster.mode must be a string')
    const namespace = record(value, 'namespace')
    const object = record(value, 'object')
    const { cpuMillis, memoryBytes } = resources(value, eventType)
    return {
      at,
      type: eventType,
      rank: TYPE_RANK[eventType],
      product: value.product,
      clusterUid: text(cluster, 'uid', 'cluster'),
      clusterName: text(cluster, 'name', 'cluster', { empty: true }),
      prod: mode === 'prod',
      namespaceUid: text(namespace, 'uid', 'namespace'),
      namespace: text(namespace, 'name', 'namespace'),
      group: text(object, 'group', 'object', { empty: true }),
      kind: text(object, 'kind', 'object'),
      name: text(object, 'name', 'object'),
      uid: text(object, 'uid', 'object'),
      cpuMillis,
      memoryBytes,
    }
  } catch (error) {
    if (error instanceof BadField) return error.message
    throw error
  }
}
