import type { Deps } from '../deps'
import { metricsOf } from '../http/metrics'
import type { Executor } from '../storage/database'
import { BadLine } from './body'
import { type MonthKey, monthKeyAt } from './calendar'
import { type Coverage, compareReadings, DELETED_RANK, mergeIntervals, type Reading, tallyOf, tallyOfAppend } from './counting'
import { readEvent, type UsageEvent } from './events'
import * as store from './store'

/** How many rejections an answer lists (the first ones by index); `rejectedCount` counts them all. */
const REJECTIONS_SHOWN = 100

interface Rejection {
  index: number
  message: string
}

/** Answer of an ingestion (docs/decisions.md §5a). */
export interface IngestResult {
  accepted: number
  duplicates: number
  /** The first REJECTIONS_SHOWN rejections, by index. */
  rejected: Rejection[]
  rejectedCount: number
}

const IngestMessages = {
  productChanged: (uid: string, product: string) => `object ${uid} was reported as ${product}; an object keeps its product`,
} as const

/** Events of one object waiting to be stored, with their positions in the request. */
interface ObjectBatch {
  uid: string
  events: { index: number; event: UsageEvent }[]
}

/** The first REJECTIONS_SHOWN rejections by index, kept in bounded memory however many come, and their count. */
class Rejections {
  #kept: Rejection[] = []
  count = 0

  add(index: number, message: string): void {
    this.count++
    this.#kept.push({ index, message })
    if (this.#kept.length >= 2 * REJECTIONS_SHOWN) this.#trim()
  }

  shown(): Rejection[] {
    this.#trim()
    return [...this.#kept]
  }

  #trim(): void {
    this.#kept.sort((a, b) => a.index - b.index)
    this.#kept.length = Math.min(this.#kept.length, REJECTIONS_SHOWN)
  }
}

/**
 * One ingestion for `orgId`: values are taken one at a time in order (their index is their
 * position), a bad one rejected alone at once, good ones kept until `store` writes them in one
 * transaction. Events already stored (same object uid, time and type) count as duplicates, and the
 * per-object integrals are brought up to date in the same transaction, so every later read sees
 * them. What it holds is bounded by the good events waiting, never by the rejections.
 */
export class Ingestion {
  #waiting = new Map<string, ObjectBatch>()
  #next = 0
  #accepted = 0
  #duplicates = 0
  readonly #rejections = new Rejections()
  /** Rejections already counted in the metrics. */
  #rejectedCounted = 0

  constructor(
    private readonly deps: Deps,
    private readonly orgId: number,
    private readonly now = deps.clock.now(),
  ) {}

  take(value: unknown): void {
    const index = this.#next++
    const event = value instanceof BadLine ? value.message : readEvent(value, this.now)
    if (typeof event === 'string') return this.#rejections.add(index, event)
    let batch = this.#waiting.get(event.uid)
    if (!batch) this.#waiting.set(event.uid, (batch = { uid: event.uid, events: [] }))
    batch.events.push({ index, event })
  }

  /** Writes the waiting events in one transaction, and counts what came since the last time in the metrics. */
  async store(): Promise<void> {
    let stored = { accepted: 0, duplicates: 0 }
    if (this.#waiting.size > 0) {
      const batches = [...this.#waiting.values()]
      this.#waiting = new Map()
      stored = await this.deps.db.write((tx) => storeBatches(tx, this.orgId, batches, this.#rejections))
      this.#accepted += stored.accepted
      this.#duplicates += stored.duplicates
    }
    const counted = metricsOf(this.deps)?.usageEvents
    counted?.labels('accepted').inc(stored.accepted)
    counted?.labels('duplicate').inc(stored.duplicates)
    counted?.labels('rejected').inc(this.#rejections.count - this.#rejectedCounted)
    this.#rejectedCounted = this.#rejections.count
  }

  result(): IngestResult {
    return {
      accepted: this.#accepted,
      duplicates: this.#duplicates,
      rejected: this.#rejections.shown(),
      rejectedCount: this.#rejections.count,
    }
  }
}

/**
 * Reads every value of `values` and stores the good events in one transaction (a request body or
 * a message: all or nothing when storing fails). Throws what reading `values` throws (invalid).
 */
export async function ingestEvents(deps: Deps, orgId: number, values: Iterable<unknown>): Promise<IngestResult> {
  const ingestion = new Ingestion(deps, orgId)
  for (const value of values) ingestion.take(value)
  await ingestion.store()
  return ingestion.result()
}

/** Coverage of paid contracts per product and cluster, computed once per batch. */
function coverageLookup(contracts: readonly store.ContractRow[]) {
  const cache = new Map<string, Coverage>()
  return (product: string, clusterUid: string): Coverage => {
    const key = `${product}\u0000${clusterUid}`
    let coverage = cache.get(key)
    if (!coverage) {
      coverage = mergeIntervals(
        contracts
          .filter((c) => c.kind === 'paid' && c.product === product && (c.clusterUids === null || c.clusterUids.includes(clusterUid)))
          .map((c) => [c.startAt, c.endAt ?? Infinity] as const),
      )
      cache.set(key, coverage)
    }
    return coverage
  }
}

async function storeBatches(
  tx: Executor,
  orgId: number,
  batches: ObjectBatch[],
  rejections: Rejections,
): Promise<{ accepted: number; duplicates: number }> {
  const result = { accepted: 0, duplicates: 0 }
  const coverageOf = coverageLookup(await store.listContracts(tx, orgId))
  const known = new Map(
    (
      await store.findObjectsByUid(
        tx,
        orgId,
        batches.map((b) => b.uid),
      )
    ).map((o) => [o.uid, o]),
  )
  const months = new Set<MonthKey>()
  for (const batch of batches) {
    const existing = known.get(batch.uid)
    const product = existing?.product ?? batch.events[0]!.event.product
    const wrong = batch.events.filter((e) => e.event.product !== product)
    for (const e of wrong) rejections.add(e.index, IngestMessages.productChanged(batch.uid, product))
    const events = batch.events
      .filter((e) => e.event.product === product)
      .map((e) => e.event)
      .sort(compareReadings)
    const fresh = await freshEvents(tx, existing, events)
    result.duplicates += events.length - fresh.length
    if (fresh.length === 0) continue
    result.accepted += fresh.length
    for (const e of fresh) months.add(monthKeyAt(e.at))
    await storeObjectEvents(tx, orgId, existing, fresh, coverageOf)
  }
  await store.addGeneratedMonths(tx, orgId, months)
  return result
}

/** The events not yet stored: duplicates inside the batch and already stored ones dropped. */
async function freshEvents(tx: Executor, existing: store.ObjectRow | undefined, sorted: UsageEvent[]): Promise<UsageEvent[]> {
  const unique = sorted.filter((e, i) => i === 0 || compareReadings(e, sorted[i - 1]!) !== 0)
  if (!existing || unique.length === 0) return unique
  // Appending after the tail (the usual case) cannot meet a stored event; only earlier ones need a look.
  if (compareReadings(unique[0]!, store.tailOf(existing)) > 0) return unique
  const stored = await store.storedEventKeys(tx, existing.id, unique[0]!.at, unique[unique.length - 1]!.at)
  return unique.filter((e) => !stored.has(`${e.at}:${e.rank}`))
}

/**
 * Stores new events of one object and updates its integrals: by the difference when they all come
 * after its last event, else (a late event) by recounting the object's whole history.
 */
async function storeObjectEvents(
  tx: Executor,
  orgId: number,
  existing: store.ObjectRow | undefined,
  fresh: UsageEvent[],
  coverageOf: (product: string, clusterUid: string) => Coverage,
): Promise<void> {
  const latest = fresh[fresh.length - 1]!
  const readings: Reading[] = fresh
  const deleted = fresh.filter((e) => e.rank === DELETED_RANK).map((e) => e.at)
  const lastDeletion = deleted.length > 0 ? Math.max(existing?.deletedAt ?? 0, ...deleted) : (existing?.deletedAt ?? null)
  const object =
    existing ??
    (await store.insertObject(tx, {
      ...objectFields(orgId, latest),
      firstAt: fresh[0]!.at,
      ...tailFields(readings[readings.length - 1]!),
      deletedAt: lastDeletion,
    }))
  await store.insertEvents(tx, object.id, readings)
  const coverage = coverageOf(object.product, latest.clusterUid)
  const appended = existing !== undefined && compareReadings(readings[0]!, store.tailOf(existing)) > 0
  if (!existing) await store.saveTally(tx, object.id, tallyOf(readings, coverage), 'add')
  else if (appended) await store.saveTally(tx, object.id, tallyOfAppend(store.tailOf(existing), readings, coverage), 'add')
  else await store.saveTally(tx, object.id, tallyOf(await store.readingsOf(tx, object.id), coverage), 'replace')
  if (!existing) return
  const newest = appended || compareReadings(readings[readings.length - 1]!, store.tailOf(existing)) > 0
  await store.updateObject(tx, {
    ...existing,
    ...(newest ? { ...objectFields(orgId, latest), ...tailFields(readings[readings.length - 1]!) } : {}),
    firstAt: Math.min(existing.firstAt, fresh[0]!.at),
    deletedAt: lastDeletion,
  })
}

function objectFields(orgId: number, e: UsageEvent) {
  return {
    orgId,
    product: e.product,
    uid: e.uid,
    clusterUid: e.clusterUid,
    clusterName: e.clusterName,
    namespaceUid: e.namespaceUid,
    namespace: e.namespace,
    apiGroup: e.group,
    kind: e.kind,
    name: e.name,
  }
}

const tailFields = (r: Reading) => ({
  lastAt: r.at,
  lastRank: r.rank,
  lastCpuMillis: r.cpuMillis,
  lastMemoryBytes: r.memoryBytes,
  lastProd: r.prod ? 1 : 0,
})

/** Recounts every object of the org and product (after its contracts changed: billable minutes move). */
export async function recountObjects(tx: Executor, orgId: number, product: string): Promise<void> {
  const coverageOf = coverageLookup(await store.listContracts(tx, orgId))
  for (const object of await store.objectsOf(tx, orgId, { product })) {
    const readings = await store.readingsOf(tx, object.id)
    await store.saveTally(tx, object.id, tallyOf(readings, coverageOf(product, object.clusterUid)), 'replace')
  }
}
