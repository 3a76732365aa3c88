import { and, count, desc, eq, getTableColumns, gte, inArray, lt, or, type SQL, sql } from 'drizzle-orm'
import { auditEvents } from '../../db/schema/audit'
import type { Executor } from '../storage/database'
import { prepared } from '../storage/prepared'

export type AuditRow = typeof auditEvents.$inferSelect
export type NewAuditRow = typeof auditEvents.$inferInsert

/** The columns an insert fills: all but the id. */
const FILLED = Object.entries(getTableColumns(auditEvents)).filter(([name]) => name !== 'id')
type Filled = Exclude<keyof NewAuditRow, 'id'>

/**
 * One event's insert, compiled once per executor: a batch runs it per row. (A multi-row insert
 * would be SQL text of a new length each batch, compiled anew, and past ~1,300 rows over
 * SQLite's limit of bound parameters.) Values go in as the driver takes them (toDriver).
 */
const insertOne = (db: Executor) =>
  db
    .insert(auditEvents)
    .values(Object.fromEntries(FILLED.map(([name]) => [name, sql`${sql.placeholder(name)}`])) as Record<Filled, SQL>)
    .returning({ id: auditEvents.id })
    .prepare()

/** A row's values as the driver takes them (a time as milliseconds), every column named, null when absent. */
const toDriver = (row: NewAuditRow) =>
  Object.fromEntries(
    FILLED.map(([name, column]) => {
      const value = row[name as Filled]
      return [name, value === null || value === undefined ? null : column.mapToDriverValue(value)]
    }),
  )

/** Appends events; their ids in order. */
export async function insertEvents(db: Executor, rows: NewAuditRow[]): Promise<number[]> {
  const insert = prepared(db, insertOne)
  const ids: number[] = []
  for (const row of rows) ids.push((await insert.get(toDriver(row)))!.id)
  return ids
}

/** What an event learns after it was written: how the request ended, how a stream closed. */
export type LaterFacts = Pick<NewAuditRow, 'status' | 'result' | 'exitCode' | 'endTime'>

export async function updateEvent(db: Executor, id: number, facts: Partial<LaterFacts>): Promise<void> {
  await db.update(auditEvents).set(facts).where(eq(auditEvents.id, id)).run()
}

/** Which events a read route may see, and the caller's filters. */
export interface AuditFilter {
  /** Events of this org only. */
  orgId?: number
  /** Events this user acted in, or that a sign-in aimed at them. */
  userId?: number
  actorLogin?: string
  kind?: string
  cluster?: string
  result?: string
  since?: Date
  until?: Date
}

function conditions(f: AuditFilter): SQL | undefined {
  const parts: (SQL | undefined)[] = [
    f.orgId === undefined ? undefined : eq(auditEvents.orgId, f.orgId),
    f.userId === undefined ? undefined : or(eq(auditEvents.actorId, f.userId), eq(auditEvents.subjectId, f.userId)),
    f.actorLogin === undefined ? undefined : eq(auditEvents.actorLogin, f.actorLogin),
    f.kind === undefined ? undefined : eq(auditEvents.kind, f.kind),
    f.cluster === undefined ? undefined : eq(auditEvents.cluster, f.cluster),
    f.result === undefined ? undefined : eq(auditEvents.result, f.result),
    f.since === undefined ? undefined : gte(auditEvents.time, f.since),
    f.until === undefined ? undefined : lt(auditEvents.time, f.until),
  ]
  return and(...parts.filter((p) => p !== undefined))
}

/** One page of the events `filter` selects, newest first, and how many it selects in all. */
export async function listEvents(
  db: Executor,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: AuditRow[]; total: number }> {
  const where = conditions(filter)
  const rows = await db
    .select()
    .from(auditEvents)
    .where(where)
    .orderBy(desc(auditEvents.time), desc(auditEvents.id))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const [counted] = await db.select({ n: count() }).from(auditEvents).where(where).all()
  return { rows, total: counted?.n ?? 0 }
}

/** Deletes up to `limit` of the events older than `before`; how many went. */
export async function deleteEventsBefore(db: Executor, before: Date, limit: number): Promise<number> {
  const oldest = db.select({ id: auditEvents.id }).from(auditEvents).where(lt(auditEvents.time, before)).limit(limit)
  return (await db.delete(auditEvents).where(inArray(auditEvents.id, oldest)).returning({ id: auditEvents.id }).all()).length
}
