import { and, asc, eq } from 'drizzle-orm'
import { cloudCredentials } from '../../db/schema/cloud'
import { AppError } from '../errors'
import { type Executor, isUniqueViolation } from '../storage/database'

export type CredentialRow = typeof cloudCredentials.$inferSelect
export type NewCredential = typeof cloudCredentials.$inferInsert

export const StoreMessages = { nameTaken: 'you already have a credential with this name' } as const

/** The owner's credentials, oldest first. */
export async function listCredentials(db: Executor, ownerId: number): Promise<CredentialRow[]> {
  return db.select().from(cloudCredentials).where(eq(cloudCredentials.ownerId, ownerId)).orderBy(asc(cloudCredentials.id)).all()
}

export async function findCredential(db: Executor, ownerId: number, name: string): Promise<CredentialRow | undefined> {
  return db
    .select()
    .from(cloudCredentials)
    .where(and(eq(cloudCredentials.ownerId, ownerId), eq(cloudCredentials.name, name)))
    .get()
}

/** Inserts a credential; a name the owner already uses is `conflict` (409). */
export async function insertCredential(db: Executor, credential: NewCredential): Promise<void> {
  try {
    await db.insert(cloudCredentials).values(credential)
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('conflict', StoreMessages.nameTaken, [{ field: 'name', message: 'is already used' }]) : e
  }
}

/** Replaces type, block and secrets of the owner's credential `name`; false when there is none. */
export async function replaceCredential(
  db: Executor,
  ownerId: number,
  name: string,
  changes: Pick<NewCredential, 'type' | 'block' | 'sealedSecrets'>,
): Promise<boolean> {
  const rows = await db
    .update(cloudCredentials)
    .set(changes)
    .where(and(eq(cloudCredentials.ownerId, ownerId), eq(cloudCredentials.name, name)))
    .returning({ id: cloudCredentials.id })
  return rows.length > 0
}

export async function deleteCredential(db: Executor, ownerId: number, name: string): Promise<boolean> {
  const rows = await db
    .delete(cloudCredentials)
    .where(and(eq(cloudCredentials.ownerId, ownerId), eq(cloudCredentials.name, name)))
    .returning({ id: cloudCredentials.id })
  return rows.length > 0
}
