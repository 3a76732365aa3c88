import { and, asc, eq, lte } from 'drizzle-orm'
import { oauth2Applications, oauth2AuthorizationCodes, oauth2DeviceAuthorizations, oauth2Grants } from '../../../db/schema/security'
import type { Executor } from '../../storage/database'

export type ApplicationRow = typeof oauth2Applications.$inferSelect
export type NewApplication = typeof oauth2Applications.$inferInsert
export type CodeRow = typeof oauth2AuthorizationCodes.$inferSelect
export type NewCode = typeof oauth2AuthorizationCodes.$inferInsert
export type GrantRow = typeof oauth2Grants.$inferSelect
export type NewGrant = typeof oauth2Grants.$inferInsert
export type DeviceAuthorizationRow = typeof oauth2DeviceAuthorizations.$inferSelect

/** The user's applications, oldest first. */
export async function listApplicationsOfUser(db: Executor, uid: number): Promise<ApplicationRow[]> {
  return db.select().from(oauth2Applications).where(eq(oauth2Applications.uid, uid)).orderBy(asc(oauth2Applications.id)).all()
}

export async function findApplicationOfUser(db: Executor, uid: number, id: number): Promise<ApplicationRow | undefined> {
  return db
    .select()
    .from(oauth2Applications)
    .where(and(eq(oauth2Applications.uid, uid), eq(oauth2Applications.id, id)))
    .get()
}

export async function findApplicationByClientId(db: Executor, clientId: string): Promise<ApplicationRow | undefined> {
  return db.select().from(oauth2Applications).where(eq(oauth2Applications.clientId, clientId)).get()
}

export async function insertApplication(db: Executor, row: NewApplication): Promise<ApplicationRow> {
  const [created] = await db.insert(oauth2Applications).values(row).returning()
  return created
}

export async function updateApplication(
  db: Executor,
  uid: number,
  id: number,
  changes: Pick<NewApplication, 'name' | 'redirectUris' | 'confidentialClient'>,
): Promise<ApplicationRow | undefined> {
  const [row] = await db
    .update(oauth2Applications)
    .set({ ...changes, updatedAt: new Date() })
    .where(and(eq(oauth2Applications.uid, uid), eq(oauth2Applications.id, id)))
    .returning()
  return row
}

/** Deletes the user's application; its codes and grants go with it (foreign-key cascade). True when one was deleted. */
export async function deleteApplicationOfUser(db: Executor, uid: number, id: number): Promise<boolean> {
  const deleted = await db
    .delete(oauth2Applications)
    .where(and(eq(oauth2Applications.uid, uid), eq(oauth2Applications.id, id)))
    .returning({ id: oauth2Applications.id })
  return deleted.length > 0
}

export async function updateApplicationSecret(
  db: Executor,
  uid: number,
  id: number,
  clientSecretHash: string,
): Promise<ApplicationRow | undefined> {
  const [row] = await db
    .update(oauth2Applications)
    .set({ clientSecretHash, updatedAt: new Date() })
    .where(and(eq(oauth2Applications.uid, uid), eq(oauth2Applications.id, id)))
    .returning()
  return row
}

/** Inserts a code, first dropping codes that expired before `now` (used or not, they can do nothing more). */
export async function insertCode(db: Executor, row: NewCode, now: number): Promise<void> {
  await db.delete(oauth2AuthorizationCodes).where(lte(oauth2AuthorizationCodes.expiresAt, now))
  await db.insert(oauth2AuthorizationCodes).values(row)
}

export async function findCodeByHash(db: Executor, codeHash: string): Promise<CodeRow | undefined> {
  return db.select().from(oauth2AuthorizationCodes).where(eq(oauth2AuthorizationCodes.codeHash, codeHash)).get()
}

export async function markCodeUsed(db: Executor, id: number, at: number): Promise<void> {
  await db.update(oauth2AuthorizationCodes).set({ usedAt: at }).where(eq(oauth2AuthorizationCodes.id, id))
}

/** Inserts a grant, first dropping grants whose refresh token expired before `now`. */
export async function insertGrant(db: Executor, row: NewGrant, now: number): Promise<GrantRow> {
  await db.delete(oauth2Grants).where(lte(oauth2Grants.refreshExpiresAt, now))
  const [created] = await db.insert(oauth2Grants).values(row).returning()
  return created
}

/** Revokes what a replayed authorization code produced. */
export async function deleteGrantsOfCode(db: Executor, codeId: number): Promise<void> {
  await db.delete(oauth2Grants).where(eq(oauth2Grants.codeId, codeId))
}

/** The grant of an access token, with its application's name. */
export async function findGrantByAccessHash(
  db: Executor,
  accessHash: string,
): Promise<(GrantRow & { applicationName: string }) | undefined> {
  const found = await db
    .select({ grant: oauth2Grants, applicationName: oauth2Applications.name })
    .from(oauth2Grants)
    .innerJoin(oauth2Applications, eq(oauth2Applications.id, oauth2Grants.applicationId))
    .where(eq(oauth2Grants.accessHash, accessHash))
    .get()
  return found && { ...found.grant, applicationName: found.applicationName }
}

export async function findGrantByRefreshHash(db: Executor, refreshHash: string): Promise<GrantRow | undefined> {
  return db.select().from(oauth2Grants).where(eq(oauth2Grants.refreshHash, refreshHash)).get()
}

export async function findGrantByPreviousRefreshHash(db: Executor, refreshHash: string): Promise<GrantRow | undefined> {
  return db.select().from(oauth2Grants).where(eq(oauth2Grants.previousRefreshHash, refreshHash)).get()
}

export async function deleteGrant(db: Executor, id: number): Promise<void> {
  await db.delete(oauth2Grants).where(eq(oauth2Grants.id, id))
}

/** Replaces a grant's tokens (refresh rotation), remembering the refresh token replaced; false when another request rotated it first. */
export async function rotateGrant(
  db: Executor,
  grant: GrantRow,
  changes: Pick<NewGrant, 'accessHash' | 'accessExpiresAt' | 'refreshHash' | 'refreshExpiresAt' | 'scopes'>,
): Promise<boolean> {
  const rows = await db
    .update(oauth2Grants)
    .set({ ...changes, previousRefreshHash: grant.refreshHash })
    .where(and(eq(oauth2Grants.id, grant.id), eq(oauth2Grants.refreshHash, grant.refreshHash)))
    .returning({ id: oauth2Grants.id })
  return rows.length > 0
}

/** Records a device authorization, first forgetting those expired at `now` (their user codes may come again). */
export async function insertDeviceAuthorization(
  db: Executor,
  row: typeof oauth2DeviceAuthorizations.$inferInsert,
  now: number,
): Promise<DeviceAuthorizationRow> {
  await db.delete(oauth2DeviceAuthorizations).where(lte(oauth2DeviceAuthorizations.expiresAt, now))
  const [created] = await db.insert(oauth2DeviceAuthorizations).values(row).returning()
  return created
}

export async function findDeviceAuthorizationByDeviceCode(
  db: Executor,
  deviceCodeHash: string,
): Promise<DeviceAuthorizationRow | undefined> {
  return db.select().from(oauth2DeviceAuthorizations).where(eq(oauth2DeviceAuthorizations.deviceCodeHash, deviceCodeHash)).get()
}

export async function findDeviceAuthorizationByUserCode(db: Executor, userCode: string): Promise<DeviceAuthorizationRow | undefined> {
  return db.select().from(oauth2DeviceAuthorizations).where(eq(oauth2DeviceAuthorizations.userCode, userCode)).get()
}

/** Changes a device authorization's state, poll time or interval. */
export async function updateDeviceAuthorization(
  db: Executor,
  id: number,
  fields: Partial<Pick<DeviceAuthorizationRow, 'state' | 'uid' | 'lastPolledAt' | 'intervalSeconds'>>,
): Promise<void> {
  await db.update(oauth2DeviceAuthorizations).set(fields).where(eq(oauth2DeviceAuthorizations.id, id))
}
