import { and, asc, eq } from 'drizzle-orm'
import { webauthnChallenges, webauthnCredentials } from '../../../../db/schema/security'
import { AppError } from '../../../errors'
import { type Executor, isUniqueViolation } from '../../../storage/database'

export type CredentialRow = typeof webauthnCredentials.$inferSelect
export type NewCredential = typeof webauthnCredentials.$inferInsert
export type ChallengeRow = typeof webauthnChallenges.$inferSelect

/** The user's keys, oldest first. */
export async function listCredentials(db: Executor, uid: number): Promise<CredentialRow[]> {
  return db.select().from(webauthnCredentials).where(eq(webauthnCredentials.uid, uid)).orderBy(asc(webauthnCredentials.id)).all()
}

export async function findCredentialByName(db: Executor, uid: number, name: string): Promise<CredentialRow | undefined> {
  return db
    .select()
    .from(webauthnCredentials)
    .where(and(eq(webauthnCredentials.uid, uid), eq(webauthnCredentials.name, name)))
    .get()
}

export async function findCredentialById(db: Executor, uid: number, credentialId: string): Promise<CredentialRow | undefined> {
  return db
    .select()
    .from(webauthnCredentials)
    .where(and(eq(webauthnCredentials.uid, uid), eq(webauthnCredentials.credentialId, credentialId)))
    .get()
}

/** Records the key's signature counter after a sign-in; only ever moves it forward. */
export async function updateSignCount(db: Executor, id: number, signCount: number): Promise<void> {
  await db.update(webauthnCredentials).set({ signCount }).where(eq(webauthnCredentials.id, id))
}

/** Inserts a key; a name the user already uses, or a credential id already registered, is `duplicate`. */
export async function insertCredential(db: Executor, row: NewCredential): Promise<CredentialRow> {
  try {
    const [created] = await db.insert(webauthnCredentials).values(row).returning()
    return created
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', 'this security key or key name is already registered') : e
  }
}

export async function deleteCredential(db: Executor, uid: number, id: number): Promise<boolean> {
  const gone = await db
    .delete(webauthnCredentials)
    .where(and(eq(webauthnCredentials.uid, uid), eq(webauthnCredentials.id, id)))
    .returning({ id: webauthnCredentials.id })
  return gone.length > 0
}

/** Stores the user's one pending challenge, replacing an earlier one. */
export async function replaceChallenge(
  db: Executor,
  row: { uid: number; challenge: string; name: string; expiresAt: number },
): Promise<void> {
  await db
    .insert(webauthnChallenges)
    .values(row)
    .onConflictDoUpdate({
      target: webauthnChallenges.uid,
      set: { challenge: row.challenge, name: row.name, expiresAt: row.expiresAt },
    })
}

/** Removes and returns the user's pending challenge: whoever takes it first is the only one to use it. */
export async function takeChallenge(db: Executor, uid: number): Promise<ChallengeRow | undefined> {
  const [row] = await db.delete(webauthnChallenges).where(eq(webauthnChallenges.uid, uid)).returning()
  return row
}
