import { and, asc, eq } from 'drizzle-orm'
import { externalLoginUsers } from '../../../../db/schema/security'
import type { Executor } from '../../../storage/database'

export type AccountLinkRow = typeof externalLoginUsers.$inferSelect
export type NewAccountLink = typeof externalLoginUsers.$inferInsert

export async function listLinksOfUser(db: Executor, uid: number): Promise<AccountLinkRow[]> {
  return db.select().from(externalLoginUsers).where(eq(externalLoginUsers.uid, uid)).orderBy(asc(externalLoginUsers.id)).all()
}

export async function insertLink(db: Executor, link: NewAccountLink): Promise<AccountLinkRow> {
  const [row] = await db.insert(externalLoginUsers).values(link).returning()
  return row
}

export async function deleteLink(db: Executor, uid: number, sourceId: number): Promise<void> {
  await db.delete(externalLoginUsers).where(and(eq(externalLoginUsers.uid, uid), eq(externalLoginUsers.sourceId, sourceId)))
}

/** The link of external account (source, issuer, subject), if any. */
export async function findLinkByIdentity(
  db: Executor,
  sourceId: number,
  issuer: string,
  externalId: string,
): Promise<AccountLinkRow | undefined> {
  return db
    .select()
    .from(externalLoginUsers)
    .where(
      and(eq(externalLoginUsers.sourceId, sourceId), eq(externalLoginUsers.issuer, issuer), eq(externalLoginUsers.externalId, externalId)),
    )
    .get()
}

/** The user's link to `sourceId`, if any (one per user and source). */
export async function findLinkOfUser(db: Executor, uid: number, sourceId: number): Promise<AccountLinkRow | undefined> {
  return db
    .select()
    .from(externalLoginUsers)
    .where(and(eq(externalLoginUsers.uid, uid), eq(externalLoginUsers.sourceId, sourceId)))
    .get()
}
