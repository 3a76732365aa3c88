import { eq } from 'drizzle-orm'
import { fleetmgrSyncTokens } from '../../../db/schema/orgs'
import type { Executor } from '../../storage/database'

export type SyncTokenRow = typeof fleetmgrSyncTokens.$inferSelect
export type NewSyncToken = typeof fleetmgrSyncTokens.$inferInsert

export async function findSyncToken(db: Executor, orgId: number): Promise<SyncTokenRow | undefined> {
  return db.select().from(fleetmgrSyncTokens).where(eq(fleetmgrSyncTokens.orgId, orgId)).get()
}

/** Stores the org's sync token, replacing the one it had. */
export async function putSyncToken(tx: Executor, token: NewSyncToken): Promise<void> {
  await tx
    .insert(fleetmgrSyncTokens)
    .values(token)
    .onConflictDoUpdate({
      target: fleetmgrSyncTokens.orgId,
      set: { userId: token.userId, name: token.name, accessKeyId: token.accessKeyId, sealedSecret: token.sealedSecret },
    })
}

export async function deleteSyncToken(tx: Executor, orgId: number): Promise<void> {
  await tx.delete(fleetmgrSyncTokens).where(eq(fleetmgrSyncTokens.orgId, orgId))
}
