import { eq } from 'drizzle-orm'
import { orgSystemAdmins, users } from '../../../db/schema'
import type { UserRow } from '../../identity/store'
import type { Executor } from '../../storage/database'

/** The org's system admin user, if it has one. */
export async function findSystemAdmin(db: Executor, orgId: number): Promise<UserRow | undefined> {
  const row = await db
    .select({ user: users })
    .from(orgSystemAdmins)
    .innerJoin(users, eq(users.id, orgSystemAdmins.uid))
    .where(eq(orgSystemAdmins.orgId, orgId))
    .get()
  return row?.user
}

export async function insertSystemAdminLink(tx: Executor, orgId: number, uid: number): Promise<void> {
  await tx.insert(orgSystemAdmins).values({ orgId, uid })
}
