import type { Executor } from '../storage/database'
import type { MonthKey } from './calendar'
import type { DayTally, MonthTally, Reading, Tally } from './counting'
import { execute, insertRows, placeholders, queryAll, type SqlValue } from './sql'

/** An object row: identity, latest names, and its last reading (the tail). */
export interface ObjectRow {
  id: number
  orgId: number
  product: string
  uid: string
  clusterUid: string
  clusterName: string
  namespaceUid: string
  namespace: string
  apiGroup: string
  kind: string
  name: string
  firstAt: number
  lastAt: number
  lastRank: number
  lastCpuMillis: number | null
  lastMemoryBytes: number | null
  lastProd: number
  deletedAt: number | null
}

const OBJECT_COLUMNS = `id, org_id AS orgId, product, uid, cluster_uid AS clusterUid, cluster_name AS clusterName,
  namespace_uid AS namespaceUid, namespace, api_group AS apiGroup, kind, name, first_at AS firstAt, last_at AS lastAt,
  last_rank AS lastRank, last_cpu_millis AS lastCpuMillis, last_memory_bytes AS lastMemoryBytes, last_prod AS lastProd,
  deleted_at AS deletedAt`

export const tailOf = (o: ObjectRow): Reading => ({
  at: o.lastAt,
  rank: o.lastRank,
  cpuMillis: o.lastCpuMillis,
  memoryBytes: o.lastMemoryBytes,
  prod: o.lastProd === 1,
})

/** The org's objects with these uids. */
export async function findObjectsByUid(db: Executor, orgId: number, uids: readonly string[]): Promise<ObjectRow[]> {
  const found: ObjectRow[] = []
  for (let i = 0; i < uids.length; i += 500) {
    const chunk = uids.slice(i, i + 500)
    found.push(
      ...(await queryAll<ObjectRow>(
        db,
        `SELECT ${OBJECT_COLUMNS} FROM usage_objects WHERE org_id = ? AND uid IN (${placeholders(chunk.length)})`,
        [orgId, ...chunk],
      )),
    )
  }
  return found
}

export type NewObject = Omit<ObjectRow, 'id'>

export async function insertObject(db: Executor, o: NewObject): Promise<ObjectRow> {
  const [row] = await queryAll<{ id: number }>(
    db,
    `INSERT INTO usage_objects (org_id, product, uid, cluster_uid, cluster_name, namespace_uid, namespace,
    api_group, kind, name, first_at, last_at, last_rank, last_cpu_millis, last_memory_bytes, last_prod, deleted_at)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
    [
      o.orgId,
      o.product,
      o.uid,
      o.clusterUid,
      o.clusterName,
      o.namespaceUid,
      o.namespace,
      o.apiGroup,
      o.kind,
      o.name,
      o.firstAt,
      o.lastAt,
      o.lastRank,
      o.lastCpuMillis,
      o.lastMemoryBytes,
      o.lastProd,
      o.deletedAt,
    ],
  )
  return { id: row!.id, ...o }
}

/** Stores the object's latest names, first time, tail and deletion. */
export async function updateObject(db: Executor, o: ObjectRow): Promise<void> {
  await execute(
    db,
    `UPDATE usage_objects SET cluster_uid = ?, cluster_name = ?, namespace_uid = ?, namespace = ?, api_group = ?, kind = ?, name = ?,
    first_at = ?, last_at = ?, last_rank = ?, last_cpu_millis = ?, last_memory_bytes = ?, last_prod = ?, deleted_at = ? WHERE id = ?`,
    [
      o.clusterUid,
      o.clusterName,
      o.namespaceUid,
      o.namespace,
      o.apiGroup,
      o.kind,
      o.name,
      o.firstAt,
      o.lastAt,
      o.lastRank,
      o.lastCpuMillis,
      o.lastMemoryBytes,
      o.lastProd,
      o.deletedAt,
      o.id,
    ],
  )
}

/** `at:rank` keys of the object's stored events within [from, to]. */
export async function storedEventKeys(db: Executor, objectId: number, from: number, to: number): Promise<Set<string>> {
  const rows = await queryAll<{ at: number; rank: number }>(
    db,
    'SELECT at, rank FROM usage_events WHERE object_id = ? AND at BETWEEN ? AND ?',
    [objectId, from, to],
  )
  return new Set(rows.map((r) => `${r.at}:${r.rank}`))
}

export async function insertEvents(db: Executor, objectId: number, readings: readonly Reading[]): Promise<void> {
  await insertRows(
    db,
    'INSERT OR IGNORE INTO usage_events (object_id, at, rank, cpu_millis, memory_bytes, prod)',
    readings.map((r) => [objectId, r.at, r.rank, r.cpuMillis, r.memoryBytes, r.prod ? 1 : 0]),
  )
}

/** The object's readings in time order (optionally only within [from, to)). */
export async function readingsOf(db: Executor, objectId: number, from = -Infinity, to = Infinity): Promise<Reading[]> {
  const rows = await queryAll<{ at: number; rank: number; cpuMillis: number | null; memoryBytes: number | null; prod: number }>(
    db,
    `SELECT at, rank, cpu_millis AS cpuMillis, memory_bytes AS memoryBytes, prod FROM usage_events
     WHERE object_id = ? AND at >= ? AND at < ? ORDER BY at, rank`,
    [objectId, Number.isFinite(from) ? from : -8.64e15, Number.isFinite(to) ? to : 8.64e15],
  )
  return rows.map((r) => ({ at: r.at, rank: r.rank, cpuMillis: r.cpuMillis, memoryBytes: r.memoryBytes, prod: r.prod === 1 }))
}

const MONTH_FIELDS = [
  'activeMs',
  'events',
  'cpuProd',
  'cpuNonProd',
  'memProd',
  'memNonProd',
  'billCpuProd',
  'billCpuNonProd',
  'billMemProd',
  'billMemNonProd',
] as const satisfies readonly (keyof MonthTally)[]
const MONTH_COLUMNS = [
  'active_ms',
  'events',
  'cpu_prod',
  'cpu_nonprod',
  'mem_prod',
  'mem_nonprod',
  'bill_cpu_prod',
  'bill_cpu_nonprod',
  'bill_mem_prod',
  'bill_mem_nonprod',
]
const DAY_FIELDS = ['activeMs', 'events', 'cpu', 'mem', 'billCpu', 'billMem'] as const satisfies readonly (keyof DayTally)[]
const DAY_COLUMNS = ['active_ms', 'events', 'cpu', 'mem', 'bill_cpu', 'bill_mem']
const addExcluded = (columns: string[]) => columns.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')

/** Adds the tally to the object's month and day rows (or, with `replace`, makes them exactly it). */
export async function saveTally(db: Executor, objectId: number, tally: Tally, mode: 'add' | 'replace'): Promise<void> {
  if (mode === 'replace') {
    await execute(db, 'DELETE FROM usage_object_months WHERE object_id = ?', [objectId])
    await execute(db, 'DELETE FROM usage_object_days WHERE object_id = ?', [objectId])
  }
  const months: SqlValue[][] = [...tally.months].map(([month, t]) => [objectId, month, ...MONTH_FIELDS.map((f) => t[f])])
  const days: SqlValue[][] = [...tally.days].map(([day, t]) => [objectId, day, ...DAY_FIELDS.map((f) => t[f])])
  await insertRows(
    db,
    `INSERT INTO usage_object_months (object_id, month, ${MONTH_COLUMNS.join(', ')})`,
    months,
    `ON CONFLICT (object_id, month) DO UPDATE SET ${addExcluded(MONTH_COLUMNS)}`,
    200,
  )
  await insertRows(
    db,
    `INSERT INTO usage_object_days (object_id, day, ${DAY_COLUMNS.join(', ')})`,
    days,
    `ON CONFLICT (object_id, day) DO UPDATE SET ${addExcluded(DAY_COLUMNS)}`,
    300,
  )
}

export async function addGeneratedMonths(db: Executor, orgId: number, months: Iterable<MonthKey>): Promise<void> {
  await insertRows(
    db,
    'INSERT OR IGNORE INTO usage_months (org_id, month)',
    [...months].map((m) => [orgId, m]),
  )
}

export async function generatedMonths(db: Executor, orgId: number): Promise<MonthKey[]> {
  return (await queryAll<{ month: number }>(db, 'SELECT month FROM usage_months WHERE org_id = ? ORDER BY month', [orgId])).map(
    (r) => r.month,
  )
}

/** An object's integrals in one month, with the object's identity. */
export interface ObjectMonth extends ObjectRow, MonthTally {
  month: MonthKey
}

export interface ObjectFilter {
  product?: string
  clusterUid?: string
  clusterUids?: readonly string[]
  namespace?: string
  namespaceUid?: string
  group?: string
  kind?: string
  objectUid?: string
}

function filterSql(filter: ObjectFilter): { where: string; values: SqlValue[] } {
  const parts: string[] = []
  const values: SqlValue[] = []
  const eq = (column: string, value: string | undefined) => {
    if (value !== undefined) {
      parts.push(`o.${column} = ?`)
      values.push(value)
    }
  }
  eq('product', filter.product)
  eq('cluster_uid', filter.clusterUid)
  eq('namespace', filter.namespace)
  eq('namespace_uid', filter.namespaceUid)
  eq('api_group', filter.group)
  eq('kind', filter.kind)
  eq('uid', filter.objectUid)
  if (filter.clusterUids) {
    parts.push(`o.cluster_uid IN (${placeholders(filter.clusterUids.length) || 'NULL'})`)
    values.push(...filter.clusterUids)
  }
  return { where: parts.map((p) => ` AND ${p}`).join(''), values }
}

/** Month rows of the org's objects within [from, to] (YYYYMM), filtered. */
export async function objectMonths(
  db: Executor,
  orgId: number,
  from: MonthKey,
  to: MonthKey,
  filter: ObjectFilter = {},
): Promise<ObjectMonth[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectMonth>(
    db,
    `SELECT ${OBJECT_COLUMNS.replace(/(^|,\s*)(\w+)/g, '$1o.$2')}, m.month, m.active_ms AS activeMs, m.events,
      m.cpu_prod AS cpuProd, m.cpu_nonprod AS cpuNonProd, m.mem_prod AS memProd, m.mem_nonprod AS memNonProd,
      m.bill_cpu_prod AS billCpuProd, m.bill_cpu_nonprod AS billCpuNonProd, m.bill_mem_prod AS billMemProd, m.bill_mem_nonprod AS billMemNonProd
    FROM usage_object_months m JOIN usage_objects o ON o.id = m.object_id
    WHERE o.org_id = ? AND m.month BETWEEN ? AND ?${where}`,
    [orgId, from, to, ...values],
  )
}

export interface ObjectDay extends DayTally {
  objectId: number
  day: number
}

/** Day rows of the given objects within [fromDay, toDay). */
export async function objectDays(
  db: Executor,
  orgId: number,
  fromDay: number,
  toDay: number,
  filter: ObjectFilter = {},
): Promise<ObjectDay[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectDay>(
    db,
    `SELECT d.object_id AS objectId, d.day, d.active_ms AS activeMs, d.events, d.cpu, d.mem, d.bill_cpu AS billCpu, d.bill_mem AS billMem
    FROM usage_object_days d JOIN usage_objects o ON o.id = d.object_id
    WHERE o.org_id = ? AND d.day >= ? AND d.day < ?${where}`,
    [orgId, fromDay, toDay, ...values],
  )
}

/** Objects whose last event may still be running (an open tail after `since`). */
export async function recentObjects(db: Executor, orgId: number, since: number, filter: ObjectFilter = {}): Promise<ObjectRow[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectRow>(
    db,
    `SELECT ${OBJECT_COLUMNS.replace(/(^|,\s*)(\w+)/g, '$1o.$2')} FROM usage_objects o
    WHERE o.org_id = ? AND o.last_at > ?${where}`,
    [orgId, since, ...values],
  )
}

export async function objectsOf(db: Executor, orgId: number, filter: ObjectFilter = {}): Promise<ObjectRow[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectRow>(
    db,
    `SELECT ${OBJECT_COLUMNS.replace(/(^|,\s*)(\w+)/g, '$1o.$2')} FROM usage_objects o WHERE o.org_id = ?${where}`,
    [orgId, ...values],
  )
}

/** A contract row (times in Unix ms; `clusterUids` null = every cluster of the org). */
export interface ContractRow {
  id: number
  orgId: number
  product: string
  kind: 'paid' | 'free'
  startAt: number
  endAt: number | null
  clusterUids: string[] | null
}

export async function listContracts(db: Executor, orgId: number | undefined, product?: string): Promise<ContractRow[]> {
  const rows = await queryAll<Omit<ContractRow, 'clusterUids'> & { clusterUids: string | null }>(
    db,
    `SELECT id, org_id AS orgId, product, kind, start_at AS startAt, end_at AS endAt, cluster_uids AS clusterUids FROM usage_contracts
     WHERE (? IS NULL OR org_id = ?) AND (? IS NULL OR product = ?) ORDER BY id`,
    [orgId ?? null, orgId ?? null, product ?? null, product ?? null],
  )
  return rows.map((r) => ({ ...r, clusterUids: r.clusterUids === null ? null : (JSON.parse(r.clusterUids) as string[]) }))
}

export async function insertContract(db: Executor, c: Omit<ContractRow, 'id'>): Promise<ContractRow> {
  const [row] = await queryAll<{ id: number }>(
    db,
    'INSERT INTO usage_contracts (org_id, product, kind, start_at, end_at, cluster_uids) VALUES (?,?,?,?,?,?) RETURNING id',
    [c.orgId, c.product, c.kind, c.startAt, c.endAt, c.clusterUids === null ? null : JSON.stringify(c.clusterUids)],
  )
  return { id: row!.id, ...c }
}

export async function findContract(db: Executor, id: number): Promise<ContractRow | undefined> {
  return (await listContracts(db, undefined)).find((c) => c.id === id)
}

export async function deleteContract(db: Executor, id: number): Promise<void> {
  await execute(db, 'DELETE FROM usage_contracts WHERE id = ?', [id])
}
