import { and, desc, eq, gt, isNull } from 'drizzle-orm'
import { msgbusAccounts, msgbusKeys } from '../../db/schema/msgbus'
import { existingAccountIds } from '../identity/store'
import type { Executor } from '../storage/database'

export type MsgbusKeyRow = typeof msgbusKeys.$inferSelect
export type NewMsgbusKey = typeof msgbusKeys.$inferInsert
export type MsgbusAccountRow = typeof msgbusAccounts.$inferSelect
export type NewMsgbusAccount = typeof msgbusAccounts.$inferInsert

export async function findKey(db: Executor, name: string): Promise<MsgbusKeyRow | undefined> {
  return db.select().from(msgbusKeys).where(eq(msgbusKeys.name, name)).get()
}

/** Inserts `key` unless a row of that name exists; returns the row that is kept. */
export async function insertKeyOnce(db: Executor, key: NewMsgbusKey): Promise<MsgbusKeyRow> {
  const inserted = await db.insert(msgbusKeys).values(key).onConflictDoNothing().returning()
  return inserted[0] ?? (await findKey(db, key.name))!
}

/** Every account key row (the operator's excluded). */
export async function listAccountKeys(db: Executor): Promise<MsgbusKeyRow[]> {
  return (await db.select().from(msgbusKeys).orderBy(msgbusKeys.name).all()).filter((row) => row.name !== 'operator')
}

export async function insertMsgbusAccount(db: Executor, row: NewMsgbusAccount): Promise<MsgbusAccountRow> {
  const [inserted] = await db.insert(msgbusAccounts).values(row).returning()
  return inserted!
}

/** The user's issued keys, newest first. */
export async function listMsgbusAccountsOf(db: Executor, uid: number): Promise<MsgbusAccountRow[]> {
  return db.select().from(msgbusAccounts).where(eq(msgbusAccounts.uid, uid)).orderBy(desc(msgbusAccounts.id)).all()
}

export async function findMsgbusAccountOf(db: Executor, uid: number, id: number): Promise<MsgbusAccountRow | undefined> {
  return db
    .select()
    .from(msgbusAccounts)
    .where(and(eq(msgbusAccounts.uid, uid), eq(msgbusAccounts.id, id)))
    .get()
}

/** Marks the row revoked at `at` unless it already is (the first revocation time stays). */
export async function markRevoked(db: Executor, id: number, at: number): Promise<void> {
  await db
    .update(msgbusAccounts)
    .set({ revokedAt: at })
    .where(and(eq(msgbusAccounts.id, id), isNull(msgbusAccounts.revokedAt)))
}

/**
 * Keys of `account` to refuse, whose JWTs have not expired by `now` (older ones can match
 * nothing): revoked ones from their revocation time, and every key of a deleted user up to its expiry.
 */
export async function liveRevocationsOf(
  db: Executor,
  account: string,
  now: number,
): Promise<{ msgbusPubKey: string; revokedAt: number }[]> {
  const unexpired = await db
    .select({
      msgbusPubKey: msgbusAccounts.msgbusPubKey,
      uid: msgbusAccounts.uid,
      revokedAt: msgbusAccounts.revokedAt,
      expiresAt: msgbusAccounts.expiresAt,
    })
    .from(msgbusAccounts)
    .where(and(eq(msgbusAccounts.account, account), gt(msgbusAccounts.expiresAt, now)))
    .all()
  const holders = await existingAccountIds(db, [...new Set(unexpired.filter((r) => r.revokedAt === null).map((r) => r.uid))])
  const rows = unexpired.filter((r) => r.revokedAt !== null || !holders.has(r.uid))
  return rows.map((r) => ({ msgbusPubKey: r.msgbusPubKey, revokedAt: r.revokedAt ?? r.expiresAt }))
}
