import { and, desc, eq, ne, sql } from 'drizzle-orm'
import { sessions } from '../../../db/schema/identity'
import type { Executor } from '../../storage/database'
import { prepared } from '../../storage/prepared'

export type SessionRow = typeof sessions.$inferSelect
export type NewSession = typeof sessions.$inferInsert

const sessionBySecretHash = (db: Executor) =>
  db
    .select()
    .from(sessions)
    .where(eq(sessions.secretHash, sql.placeholder('hash')))
    .prepare()

/** Every cookie-authenticated request asks this: a prepared query. */
export async function findSessionBySecretHash(db: Executor, secretHash: string): Promise<SessionRow | undefined> {
  return prepared(db, sessionBySecretHash).get({ hash: secretHash })
}

export async function insertSession(db: Executor, session: NewSession): Promise<SessionRow> {
  const [row] = await db.insert(sessions).values(session).returning()
  return row
}

/** The user's sessions, most recently used first. */
export async function listSessionsOfUser(db: Executor, uid: number): Promise<SessionRow[]> {
  return db.select().from(sessions).where(eq(sessions.uid, uid)).orderBy(desc(sessions.lastSeenAt), desc(sessions.id)).all()
}

export async function deleteSession(db: Executor, id: number): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, id))
}

/** Deletes the user's session with public id `sid`; returns whether one went. */
export async function deleteSessionBySid(db: Executor, uid: number, sid: string): Promise<boolean> {
  const gone = await db
    .delete(sessions)
    .where(and(eq(sessions.uid, uid), eq(sessions.sid, sid)))
    .returning({ id: sessions.id })
  return gone.length > 0
}

/** Deletes every session of the user except `keepId` (none kept when undefined). */
export async function deleteOtherSessions(db: Executor, uid: number, keepId: number | undefined): Promise<void> {
  await db.delete(sessions).where(keepId === undefined ? eq(sessions.uid, uid) : and(eq(sessions.uid, uid), ne(sessions.id, keepId)))
}

export async function touchSession(db: Executor, id: number, at: number): Promise<void> {
  await db.update(sessions).set({ lastSeenAt: at }).where(eq(sessions.id, id))
}
