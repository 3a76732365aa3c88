import { and, eq, lt, sql } from 'drizzle-orm'
import { twoFactorEnrollments, twoFactors } from '../../../../db/schema/security'
import { AppError } from '../../../errors'
import { type Executor, isUniqueViolation } from '../../../storage/database'

export type TwoFactorRow = typeof twoFactors.$inferSelect
export type EnrollmentRow = typeof twoFactorEnrollments.$inferSelect

export async function findTwoFactor(db: Executor, uid: number): Promise<TwoFactorRow | undefined> {
  return db.select().from(twoFactors).where(eq(twoFactors.uid, uid)).get()
}

export async function findEnrollment(db: Executor, uid: number): Promise<EnrollmentRow | undefined> {
  return db.select().from(twoFactorEnrollments).where(eq(twoFactorEnrollments.uid, uid)).get()
}

/** Starts (or restarts) the user's pending enrollment with a new secret. */
export async function replaceEnrollment(db: Executor, row: { uid: number; sealedSecret: string; expiresAt: number }): Promise<void> {
  await db
    .insert(twoFactorEnrollments)
    .values(row)
    .onConflictDoUpdate({
      target: twoFactorEnrollments.uid,
      set: { sealedSecret: row.sealedSecret, expiresAt: row.expiresAt, failedAttempts: 0 },
    })
}

export async function countEnrollmentFailure(db: Executor, id: number): Promise<void> {
  await db
    .update(twoFactorEnrollments)
    .set({ failedAttempts: sql`${twoFactorEnrollments.failedAttempts} + 1` })
    .where(eq(twoFactorEnrollments.id, id))
}

/**
 * Turns a pending enrollment into the user's second factor, in one transaction: the pending row
 * must still be the one whose secret was checked (false otherwise), and a user already enrolled is `duplicate`.
 */
export async function completeEnrollment(
  db: Executor,
  pending: EnrollmentRow,
  fields: { scratchHash: string; lastUsedStep: number },
): Promise<boolean> {
  const gone = await db
    .delete(twoFactorEnrollments)
    .where(and(eq(twoFactorEnrollments.id, pending.id), eq(twoFactorEnrollments.sealedSecret, pending.sealedSecret)))
    .returning({ id: twoFactorEnrollments.id })
  if (gone.length === 0) return false
  try {
    await db.insert(twoFactors).values({ uid: pending.uid, sealedSecret: pending.sealedSecret, ...fields })
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', 'two-factor authentication is already enrolled') : e
  }
  return true
}

/** Records that the code of `step` was used; false when that step (or a later one) already was: a replay. */
export async function consumeStep(db: Executor, uid: number, step: number): Promise<boolean> {
  const rows = await db
    .update(twoFactors)
    .set({ lastUsedStep: step, failedAttempts: 0 })
    .where(and(eq(twoFactors.uid, uid), lt(twoFactors.lastUsedStep, step)))
    .returning({ id: twoFactors.id })
  return rows.length > 0
}

/** Clears the scratch token if it is still `scratchHash`; false when another request used it first. */
export async function consumeScratch(db: Executor, uid: number, scratchHash: string): Promise<boolean> {
  const rows = await db
    .update(twoFactors)
    .set({ scratchHash: '', failedAttempts: 0 })
    .where(and(eq(twoFactors.uid, uid), eq(twoFactors.scratchHash, scratchHash)))
    .returning({ id: twoFactors.id })
  return rows.length > 0
}

/** Counts a wrong code; the `limit`-th in a row locks the factor until `lockUntil` and restarts the count. */
export async function countFailure(db: Executor, uid: number, limit: number, lockUntil: number): Promise<void> {
  const row = await db
    .update(twoFactors)
    .set({ failedAttempts: sql`${twoFactors.failedAttempts} + 1` })
    .where(eq(twoFactors.uid, uid))
    .returning({ failedAttempts: twoFactors.failedAttempts })
  if (row[0] && row[0].failedAttempts >= limit)
    await db.update(twoFactors).set({ failedAttempts: 0, lockedUntil: lockUntil }).where(eq(twoFactors.uid, uid))
}

export async function setScratchHash(db: Executor, uid: number, scratchHash: string): Promise<boolean> {
  const rows = await db.update(twoFactors).set({ scratchHash }).where(eq(twoFactors.uid, uid)).returning({ id: twoFactors.id })
  return rows.length > 0
}

export async function deleteTwoFactor(db: Executor, uid: number): Promise<void> {
  await db.delete(twoFactors).where(eq(twoFactors.uid, uid))
  await db.delete(twoFactorEnrollments).where(eq(twoFactorEnrollments.uid, uid))
}
