import { eq } from 'drizzle-orm'
import { orgAuthSources } from '../../../db/schema/sso'
import { AppError } from '../../errors'
import { type Executor, isUniqueViolation } from '../../storage/database'

export type AuthSourceRow = typeof orgAuthSources.$inferSelect
export type NewAuthSource = typeof orgAuthSources.$inferInsert

const StoreMessages = { exists: 'this organization already has an auth source' } as const

export async function findAuthSource(db: Executor, orgId: number): Promise<AuthSourceRow | undefined> {
  return db.select().from(orgAuthSources).where(eq(orgAuthSources.orgId, orgId)).get()
}

/** Inserts the org's source; a second one is `conflict` (409). */
export async function insertAuthSource(db: Executor, source: NewAuthSource): Promise<AuthSourceRow> {
  try {
    const [row] = await db.insert(orgAuthSources).values(source).returning()
    return row!
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('conflict', StoreMessages.exists) : e
  }
}

export async function updateAuthSource(db: Executor, orgId: number, changes: Partial<NewAuthSource>): Promise<AuthSourceRow | undefined> {
  const [row] = await db
    .update(orgAuthSources)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(orgAuthSources.orgId, orgId))
    .returning()
  return row
}

export async function deleteAuthSource(db: Executor, orgId: number): Promise<boolean> {
  return (await db.delete(orgAuthSources).where(eq(orgAuthSources.orgId, orgId)).returning({ orgId: orgAuthSources.orgId })).length > 0
}
