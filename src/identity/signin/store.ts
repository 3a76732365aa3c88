import { and, eq, gt, gte, isNotNull, lte, sql } from 'drizzle-orm'
import { signInTickets } from '../../../db/schema/sign-in'
import type { Executor } from '../../storage/database'

export type TicketRow = typeof signInTickets.$inferSelect

export async function insertTicket(tx: Executor, row: typeof signInTickets.$inferInsert): Promise<void> {
  await tx.insert(signInTickets).values(row)
}

/** The ticket with this digest, unless it expired at `nowMs`. */
export async function findLiveTicket(db: Executor, idHash: string, nowMs: number): Promise<TicketRow | undefined> {
  const [row] = await db
    .select()
    .from(signInTickets)
    .where(and(eq(signInTickets.idHash, idHash), gt(signInTickets.expiresAtMs, nowMs)))
  return row
}

/** Deletes the ticket; true for the one caller whose delete found it. */
export async function deleteTicket(tx: Executor, idHash: string): Promise<boolean> {
  return (await tx.delete(signInTickets).where(eq(signInTickets.idHash, idHash)).returning({ idHash: signInTickets.idHash })).length > 0
}

/** Counts a wrong second factor; the ticket is deleted once it has had `max`. */
export async function countTicketFailure(tx: Executor, idHash: string, max: number): Promise<void> {
  await tx
    .update(signInTickets)
    .set({ failures: sql`${signInTickets.failures} + 1` })
    .where(eq(signInTickets.idHash, idHash))
  await tx.delete(signInTickets).where(and(eq(signInTickets.idHash, idHash), gte(signInTickets.failures, max)))
}

export async function setTicketChallenge(tx: Executor, idHash: string, challenge: string): Promise<void> {
  await tx.update(signInTickets).set({ challenge }).where(eq(signInTickets.idHash, idHash))
}

/** Clears and returns the ticket's challenge: it answers once, whoever asks first. */
export async function takeTicketChallenge(tx: Executor, idHash: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ challenge: signInTickets.challenge })
    .from(signInTickets)
    .where(and(eq(signInTickets.idHash, idHash), isNotNull(signInTickets.challenge)))
  if (!row?.challenge) return undefined
  await tx.update(signInTickets).set({ challenge: null }).where(eq(signInTickets.idHash, idHash))
  return row.challenge
}

export async function deleteExpiredTickets(tx: Executor, nowMs: number): Promise<void> {
  await tx.delete(signInTickets).where(lte(signInTickets.expiresAtMs, nowMs))
}
