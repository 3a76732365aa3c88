import { and, asc, eq, inArray } from 'drizzle-orm'
import { emailAddresses, users } from '../../../db/schema/identity'
import type { Executor } from '../../storage/database'

export type EmailRow = typeof emailAddresses.$inferSelect

/** The user's addresses in insertion order (the sign-up address first). */
export async function listEmailsOfUser(db: Executor, uid: number): Promise<EmailRow[]> {
  return db.select().from(emailAddresses).where(eq(emailAddresses.uid, uid)).orderBy(asc(emailAddresses.id)).all()
}

/** Rows for these lower-cased addresses, whoever owns them. */
export async function findEmails(db: Executor, lowerEmails: string[]): Promise<EmailRow[]> {
  if (lowerEmails.length === 0) return []
  return db.select().from(emailAddresses).where(inArray(emailAddresses.lowerEmail, lowerEmails)).all()
}

export async function findEmailOfUser(db: Executor, uid: number, id: number): Promise<EmailRow | undefined> {
  return db
    .select()
    .from(emailAddresses)
    .where(and(eq(emailAddresses.uid, uid), eq(emailAddresses.id, id)))
    .get()
}

export async function insertEmails(db: Executor, uid: number, emails: string[]): Promise<void> {
  if (emails.length === 0) return
  await db.insert(emailAddresses).values(emails.map((email) => ({ uid, email, lowerEmail: email.toLowerCase() })))
}

export async function insertPrimaryEmail(db: Executor, uid: number, email: string): Promise<void> {
  await db.insert(emailAddresses).values({ uid, email, lowerEmail: email.toLowerCase(), isPrimary: true })
}

export async function deleteEmailsById(db: Executor, ids: number[]): Promise<void> {
  if (ids.length === 0) return
  await db.delete(emailAddresses).where(inArray(emailAddresses.id, ids))
}

/** Makes row `id` the user's only primary address and mirrors it into `users.email`. */
export async function setPrimaryEmail(db: Executor, uid: number, row: EmailRow): Promise<void> {
  await db.update(emailAddresses).set({ isPrimary: false }).where(eq(emailAddresses.uid, uid))
  await db.update(emailAddresses).set({ isPrimary: true }).where(eq(emailAddresses.id, row.id))
  await db.update(users).set({ email: row.email, updatedAt: new Date() }).where(eq(users.id, uid))
}
