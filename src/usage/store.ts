import { getTableName } from 'drizzle-orm'
import { usageContracts, usageEvents, usageMonths, usageObjectDays, usageObjectMonths, usageObjects } from '../../db/schema/usage'
import type { Executor } from '../storage/database'
import type { MonthKey } from './calendar'
import type { DayTally, MonthTally, Reading, Tally } from './counting'
import { execute, insertRows, placeholders, queryAll, type SqlValue, selectList } from './sql'

// The tables' and columns' SQL names, from db/schema/usage.ts.
const O = usageObjects
const E = usageEvents
const M = usageObjectMonths
const D = usageObjectDays
const OBJECTS = getTableName(O)
const EVENTS = getTableName(E)
const OBJECT_MONTHS = getTableName(M)
const OBJECT_DAYS = getTableName(D)
const MONTHS = getTableName(usageMonths)
const C = usageContracts
const CONTRACTS = getTableName(C)

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

/** What an update may change: everything but the object's identity (id, org, product, uid). */
const OBJECT_CHANGES = [
  'clusterUid',
  'clusterName',
  'namespaceUid',
  'namespace',
  'apiGroup',
  'kind',
  'name',
  'firstAt',
  'lastAt',
  'lastRank',
  'lastCpuMillis',
  'lastMemoryBytes',
  'lastProd',
  'deletedAt',
] as const satisfies readonly (keyof ObjectRow)[]
const NEW_OBJECT = ['orgId', 'product', 'uid', ...OBJECT_CHANGES] as const satisfies readonly (keyof ObjectRow)[]
const OBJECT_FIELDS = ['id', ...NEW_OBJECT] as const satisfies readonly (keyof ObjectRow)[]
const OBJECT_COLUMNS = selectList(O, OBJECT_FIELDS)
const OBJECT_COLUMNS_OF_O = selectList(O, OBJECT_FIELDS, 'o.')

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
        `SELECT ${OBJECT_COLUMNS} FROM ${OBJECTS} WHERE ${O.orgId.name} = ? AND ${O.uid.name} IN (${placeholders(chunk.length)})`,
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
    `INSERT INTO ${OBJECTS} (${NEW_OBJECT.map((f) => O[f].name).join(', ')})
    VALUES (${placeholders(NEW_OBJECT.length)}) RETURNING ${O.id.name} AS id`,
    NEW_OBJECT.map((f) => o[f]),
  )
  return { id: row!.id, ...o }
}

/** Stores the object's latest names, first time, tail and deletion. */
export async function updateObject(db: Executor, o: ObjectRow): Promise<void> {
  await execute(db, `UPDATE ${OBJECTS} SET ${OBJECT_CHANGES.map((f) => `${O[f].name} = ?`).join(', ')} WHERE ${O.id.name} = ?`, [
    ...OBJECT_CHANGES.map((f) => o[f]),
    o.id,
  ])
}

/** `at:rank` keys of the object's stored events within [from, to]. */
export async function storedEventKeys(db: Executor, objectId: number, from: number, to: number): Promise<Set<string>> {
  const rows = await queryAll<{ at: number; rank: number }>(
    db,
    `SELECT ${selectList(E, ['at', 'rank'])} FROM ${EVENTS} WHERE ${E.objectId.name} = ? AND ${E.at.name} BETWEEN ? AND ?`,
    [objectId, from, to],
  )
  return new Set(rows.map((r) => `${r.at}:${r.rank}`))
}

export async function insertEvents(db: Executor, objectId: number, readings: readonly Reading[]): Promise<void> {
  await insertRows(
    db,
    `INSERT OR IGNORE INTO ${EVENTS} (${[E.objectId, E.at, E.rank, E.cpuMillis, E.memoryBytes, E.prod].map((c) => c.name).join(', ')})`,
    readings.map((r) => [objectId, r.at, r.rank, r.cpuMillis, r.memoryBytes, r.prod ? 1 : 0]),
  )
}

/** The object's readings in time order (optionally only within [from, to)). */
export async function readingsOf(db: Executor, objectId: number, from = -Infinity, to = Infinity): Promise<Reading[]> {
  const rows = await queryAll<{ at: number; rank: number; cpuMillis: number | null; memoryBytes: number | null; prod: number }>(
    db,
    `SELECT ${selectList(E, ['at', 'rank', 'cpuMillis', 'memoryBytes', 'prod'])} FROM ${EVENTS}
     WHERE ${E.objectId.name} = ? AND ${E.at.name} >= ? AND ${E.at.name} < ? ORDER BY ${E.at.name}, ${E.rank.name}`,
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
const MONTH_COLUMNS = MONTH_FIELDS.map((f) => M[f].name)
const DAY_FIELDS = ['activeMs', 'events', 'cpu', 'mem', 'billCpu', 'billMem'] as const satisfies readonly (keyof DayTally)[]
const DAY_COLUMNS = DAY_FIELDS.map((f) => D[f].name)
const addExcluded = (columns: readonly string[]) => columns.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')

/** Adds the tally to the object's month and day rows (or, with `replace`, makes them exactly it). */
export async function saveTally(db: Executor, objectId: number, tally: Tally, mode: 'add' | 'replace'): Promise<void> {
  if (mode === 'replace') {
    await execute(db, `DELETE FROM ${OBJECT_MONTHS} WHERE ${M.objectId.name} = ?`, [objectId])
    await execute(db, `DELETE FROM ${OBJECT_DAYS} WHERE ${D.objectId.name} = ?`, [objectId])
  }
  const months: SqlValue[][] = [...tally.months].map(([month, t]) => [objectId, month, ...MONTH_FIELDS.map((f) => t[f])])
  const days: SqlValue[][] = [...tally.days].map(([day, t]) => [objectId, day, ...DAY_FIELDS.map((f) => t[f])])
  await insertRows(
    db,
    `INSERT INTO ${OBJECT_MONTHS} (${M.objectId.name}, ${M.month.name}, ${MONTH_COLUMNS.join(', ')})`,
    months,
    `ON CONFLICT (${M.objectId.name}, ${M.month.name}) DO UPDATE SET ${addExcluded(MONTH_COLUMNS)}`,
    200,
  )
  await insertRows(
    db,
    `INSERT INTO ${OBJECT_DAYS} (${D.objectId.name}, ${D.day.name}, ${DAY_COLUMNS.join(', ')})`,
    days,
    `ON CONFLICT (${D.objectId.name}, ${D.day.name}) DO UPDATE SET ${addExcluded(DAY_COLUMNS)}`,
    300,
  )
}

export async function addGeneratedMonths(db: Executor, orgId: number, months: Iterable<MonthKey>): Promise<void> {
  await insertRows(
    db,
    `INSERT OR IGNORE INTO ${MONTHS} (${usageMonths.orgId.name}, ${usageMonths.month.name})`,
    [...months].map((m) => [orgId, m]),
  )
}

export async function generatedMonths(db: Executor, orgId: number): Promise<MonthKey[]> {
  return (
    await queryAll<{ month: number }>(
      db,
      `SELECT ${selectList(usageMonths, ['month'])} FROM ${MONTHS} WHERE ${usageMonths.orgId.name} = ? ORDER BY month`,
      [orgId],
    )
  ).map((r) => r.month)
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
  const eq = (column: { name: string }, value: string | undefined) => {
    if (value !== undefined) {
      parts.push(`o.${column.name} = ?`)
      values.push(value)
    }
  }
  eq(O.product, filter.product)
  eq(O.clusterUid, filter.clusterUid)
  eq(O.namespace, filter.namespace)
  eq(O.namespaceUid, filter.namespaceUid)
  eq(O.apiGroup, filter.group)
  eq(O.kind, filter.kind)
  eq(O.uid, filter.objectUid)
  if (filter.clusterUids) {
    parts.push(`o.${O.clusterUid.name} IN (${placeholders(filter.clusterUids.length) || 'NULL'})`)
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
    `SELECT ${OBJECT_COLUMNS_OF_O}, ${selectList(M, ['month', ...MONTH_FIELDS], 'm.')}
    FROM ${OBJECT_MONTHS} m JOIN ${OBJECTS} o ON o.${O.id.name} = m.${M.objectId.name}
    WHERE o.${O.orgId.name} = ? AND m.${M.month.name} BETWEEN ? AND ?${where}`,
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
    `SELECT ${selectList(D, ['objectId', 'day', ...DAY_FIELDS], 'd.')}
    FROM ${OBJECT_DAYS} d JOIN ${OBJECTS} o ON o.${O.id.name} = d.${D.objectId.name}
    WHERE o.${O.orgId.name} = ? AND d.${D.day.name} >= ? AND d.${D.day.name} < ?${where}`,
    [orgId, fromDay, toDay, ...values],
  )
}

/** Objects whose last event may still be running (an open tail after `since`). */
export async function recentObjects(db: Executor, orgId: number, since: number, filter: ObjectFilter = {}): Promise<ObjectRow[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectRow>(
    db,
    `SELECT ${OBJECT_COLUMNS_OF_O} FROM ${OBJECTS} o
    WHERE o.${O.orgId.name} = ? AND o.${O.lastAt.name} > ?${where}`,
    [orgId, since, ...values],
  )
}

export async function objectsOf(db: Executor, orgId: number, filter: ObjectFilter = {}): Promise<ObjectRow[]> {
  const { where, values } = filterSql(filter)
  return queryAll<ObjectRow>(db, `SELECT ${OBJECT_COLUMNS_OF_O} FROM ${OBJECTS} o WHERE o.${O.orgId.name} = ?${where}`, [orgId, ...values])
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
    `SELECT ${selectList(C, ['id', 'orgId', 'product', 'kind', 'startAt', 'endAt', 'clusterUids'])} FROM ${CONTRACTS}
     WHERE (? IS NULL OR ${C.orgId.name} = ?) AND (? IS NULL OR ${C.product.name} = ?) ORDER BY ${C.id.name}`,
    [orgId ?? null, orgId ?? null, product ?? null, product ?? null],
  )
  return rows.map((r) => ({ ...r, clusterUids: r.clusterUids === null ? null : (JSON.parse(r.clusterUids) as string[]) }))
}

export async function insertContract(db: Executor, c: Omit<ContractRow, 'id'>): Promise<ContractRow> {
  const [row] = await queryAll<{ id: number }>(
    db,
    `INSERT INTO ${CONTRACTS} (${[C.orgId, C.product, C.kind, C.startAt, C.endAt, C.clusterUids].map((c) => c.name).join(', ')})
     VALUES (?,?,?,?,?,?) RETURNING ${C.id.name} AS id`,
    [c.orgId, c.product, c.kind, c.startAt, c.endAt, c.clusterUids === null ? null : JSON.stringify(c.clusterUids)],
  )
  return { id: row!.id, ...c }
}

export async function findContract(db: Executor, id: number): Promise<ContractRow | undefined> {
  return (await listContracts(db, undefined)).find((c) => c.id === id)
}

export async function deleteContract(db: Executor, id: number): Promise<void> {
  await execute(db, `DELETE FROM ${CONTRACTS} WHERE ${C.id.name} = ?`, [id])
}
