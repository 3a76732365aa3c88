import { and, asc, eq, type SQL } from 'drizzle-orm'
import { inboxSubscriptions } from '../../db/schema/inbox'
import { AppError } from '../errors'
import type { Executor } from '../storage/database'
import { isUniqueViolation } from '../storage/database'

export type SubscriptionRow = typeof inboxSubscriptions.$inferSelect
export type NewSubscription = typeof inboxSubscriptions.$inferInsert
export type SubscriptionColumn =
  | 'scope'
  | 'orgId'
  | 'orgName'
  | 'clusterName'
  | 'clusterUid'
  | 'namespaceName'
  | 'namespaceUid'
  | 'apiGroup'
  | 'version'
  | 'resource'
  | 'resourceName'
  | 'resourceUid'

export const Messages = { duplicate: 'you are already subscribed to this' } as const

/** The subscriber's subscriptions matching every given column exactly, oldest first. */
export async function listSubscriptions(
  db: Executor,
  subscriberId: number,
  filters: Partial<Record<SubscriptionColumn, string>>,
): Promise<SubscriptionRow[]> {
  const conditions: SQL[] = [eq(inboxSubscriptions.subscriberId, subscriberId)]
  for (const [column, value] of Object.entries(filters) as [SubscriptionColumn, string | undefined][])
    if (value !== undefined) conditions.push(eq(inboxSubscriptions[column], value))
  return db
    .select()
    .from(inboxSubscriptions)
    .where(and(...conditions))
    .orderBy(asc(inboxSubscriptions.id))
    .all()
}

export async function findByKey(db: Executor, subscriberId: number, key: string): Promise<SubscriptionRow | undefined> {
  return db
    .select()
    .from(inboxSubscriptions)
    .where(and(eq(inboxSubscriptions.subscriberId, subscriberId), eq(inboxSubscriptions.key, key)))
    .get()
}

/** Inserts a subscription; the same one twice is `duplicate`. */
export async function insertSubscription(tx: Executor, row: NewSubscription): Promise<SubscriptionRow> {
  try {
    const [inserted] = await tx.insert(inboxSubscriptions).values(row).returning()
    return inserted
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', Messages.duplicate) : e
  }
}

/** Inserts unless the subscriber already holds the same subscription (idempotent subscribe). */
export async function insertSubscriptionIfAbsent(tx: Executor, row: NewSubscription): Promise<void> {
  await tx.insert(inboxSubscriptions).values(row).onConflictDoNothing()
}

export async function deleteByKey(tx: Executor, subscriberId: number, key: string): Promise<void> {
  await tx.delete(inboxSubscriptions).where(and(eq(inboxSubscriptions.subscriberId, subscriberId), eq(inboxSubscriptions.key, key)))
}

const orgSubscriptions = (orgId: number) => and(eq(inboxSubscriptions.scope, 'org'), eq(inboxSubscriptions.orgId, String(orgId)))

/** Everyone's subscriptions to the org `orgId`, in the caller's write unit (the org is being deleted: Deps.orgDepartures). */
export async function deleteOrgSubscriptions(tx: Executor, orgId: number): Promise<void> {
  await tx.delete(inboxSubscriptions).where(orgSubscriptions(orgId))
}

/** `uid`'s subscription to the org `orgId`, in the caller's write unit (they left it: Deps.orgDepartures). */
export async function deleteMemberSubscriptions(tx: Executor, orgId: number, uid: number): Promise<void> {
  await tx.delete(inboxSubscriptions).where(and(eq(inboxSubscriptions.subscriberId, uid), orgSubscriptions(orgId)))
}
