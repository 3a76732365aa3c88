import { and, count, desc, eq, gte, inArray, lt, or, type SQL } from 'drizzle-orm'
import { auditEvents } from '../../db/schema/audit'
import type { Executor } from '../storage/database'

export type AuditRow = typeof auditEvents.$inferSelect
export type NewAuditRow = typeof auditEvents.$inferInsert

/** Appends events in one statement; their ids in order. */
export async function insertEvents(db: Executor, rows: NewAuditRow[]): Promise<number[]> {
  if (rows.length === 0) return []
  return (await db.insert(auditEvents).values(rows).returning({ id: auditEvents.id }).all()).map((r) => r.id)
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
