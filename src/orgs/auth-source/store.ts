import { and, asc, eq } from 'drizzle-orm'
import { USER_TYPE } from '../../../db/schema/codes'
import { orgUsers } from '../../../db/schema/orgs'
import { orgAuthSources } from '../../../db/schema/sso'
import type { SsoSourceSummary } from '../../deps'
import { AppError } from '../../errors'
import { accounts } from '../../identity/store'
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

const ssoSummary = { orgId: orgAuthSources.orgId, orgName: accounts.name, name: orgAuthSources.name, provider: orgAuthSources.provider }

/** The active single sign-on source of the organization named `orgName` (case-insensitive), if any. */
export async function findActiveSourceOfOrg(db: Executor, orgName: string): Promise<SsoSourceSummary | undefined> {
  return db
    .select(ssoSummary)
    .from(orgAuthSources)
    .innerJoin(accounts, eq(accounts.id, orgAuthSources.orgId))
    .where(and(eq(accounts.lowerName, orgName.toLowerCase()), eq(accounts.type, USER_TYPE.organization), eq(orgAuthSources.isActive, true)))
    .get()
}

/** The first active source (by org id) that makes `uid`, a member of its org, sign in with single sign-on, if any. */
export async function findSourceEnforcedOn(db: Executor, uid: number): Promise<SsoSourceSummary | undefined> {
  return db
    .select(ssoSummary)
    .from(orgAuthSources)
    .innerJoin(orgUsers, eq(orgUsers.orgId, orgAuthSources.orgId))
    .innerJoin(accounts, eq(accounts.id, orgAuthSources.orgId))
    .where(and(eq(orgUsers.uid, uid), eq(orgAuthSources.isActive, true), eq(orgAuthSources.enforceForMembers, true)))
    .orderBy(asc(orgAuthSources.orgId))
    .get()
}
