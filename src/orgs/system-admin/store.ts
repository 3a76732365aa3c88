import { eq } from 'drizzle-orm'
import { orgSystemAdmins } from '../../../db/schema/orgs'
import { findUserById, findUserByName, type UserRow } from '../../identity/store'
import type { Executor } from '../../storage/database'

/** The org's system admin user, if it has one (the user row through identity's interface). */
export async function findSystemAdmin(db: Executor, orgId: number): Promise<UserRow | undefined> {
  const link = await db.select({ uid: orgSystemAdmins.uid }).from(orgSystemAdmins).where(eq(orgSystemAdmins.orgId, orgId)).get()
  return link ? findUserById(db, link.uid) : undefined
}

/**
 * The user `name` as the org's membership routes name them: an individual user, or this org's own
 * system admin (a bot, which the general lookup does not find), so the member list's entries can be named.
 */
export async function findMemberCandidateByName(db: Executor, orgId: number, name: string): Promise<UserRow | undefined> {
  const user = await findUserByName(db, name)
  if (user) return user
  const systemAdmin = await findSystemAdmin(db, orgId)
  return systemAdmin?.lowerName === name.toLowerCase() ? systemAdmin : undefined
}

export async function insertSystemAdminLink(tx: Executor, orgId: number, uid: number): Promise<void> {
  await tx.insert(orgSystemAdmins).values({ orgId, uid })
}
