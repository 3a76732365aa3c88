import { and, desc, eq, inArray, sql } from 'drizzle-orm'
import { accessTokens } from '../../../db/schema/identity'
import { AppError } from '../../errors'
import { type Executor, isUniqueViolation } from '../../storage/database'
import { prepared } from '../../storage/prepared'

export type AccessTokenRow = typeof accessTokens.$inferSelect
export type NewAccessToken = typeof accessTokens.$inferInsert

const tokensByLastEight = (db: Executor) =>
  db
    .select()
    .from(accessTokens)
    .where(eq(accessTokens.tokenLastEight, sql.placeholder('lastEight')))
    .prepare()

export async function findTokensByLastEight(db: Executor, lastEight: string): Promise<AccessTokenRow[]> {
  return prepared(db, tokensByLastEight).all({ lastEight })
}

/** A page of the user's tokens, newest first, and how many they have. */
export async function listTokensPage(
  db: Executor,
  uid: number,
  limit: number,
  offset: number,
): Promise<{ rows: AccessTokenRow[]; total: number }> {
  const rows = await db
    .select()
    .from(accessTokens)
    .where(eq(accessTokens.uid, uid))
    .orderBy(desc(accessTokens.id))
    .limit(limit)
    .offset(offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(accessTokens).where(eq(accessTokens.uid, uid)).get()
  return { rows, total: count?.n ?? 0 }
}

export async function findTokenOfUser(db: Executor, uid: number, id: number): Promise<AccessTokenRow | undefined> {
  return db
    .select()
    .from(accessTokens)
    .where(and(eq(accessTokens.uid, uid), eq(accessTokens.id, id)))
    .get()
}

export async function findTokenOfUserByName(db: Executor, uid: number, name: string): Promise<AccessTokenRow | undefined> {
  return db
    .select()
    .from(accessTokens)
    .where(and(eq(accessTokens.uid, uid), eq(accessTokens.name, name)))
    .get()
}

/** Inserts a token; a name the user already uses is `duplicate`. */
export async function insertToken(db: Executor, token: NewAccessToken): Promise<AccessTokenRow> {
  try {
    const [row] = await db.insert(accessTokens).values(token).returning()
    return row
  } catch (e) {
    throw isUniqueViolation(e)
      ? new AppError('duplicate', 'access token name has been used already', [
          { field: 'name', message: 'is already used by another token' },
        ])
      : e
  }
}

/** Deletes the user's tokens among `ids`; returns how many went. */
export async function deleteTokensOfUser(db: Executor, uid: number, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0
  const gone = await db
    .delete(accessTokens)
    .where(and(eq(accessTokens.uid, uid), inArray(accessTokens.id, ids)))
    .returning({ id: accessTokens.id })
  return gone.length
}

/** Revokes `uid`'s kubeconfig token named `name` of cluster `clusterId`, if there is one. */
export async function deleteKubeconfigToken(db: Executor, uid: number, name: string, clusterId: number): Promise<void> {
  await db
    .delete(accessTokens)
    .where(and(eq(accessTokens.uid, uid), eq(accessTokens.name, name), eq(accessTokens.kubeconfigClusterId, clusterId)))
}

export async function markTokenUsed(db: Executor, id: number, at: number): Promise<void> {
  await db
    .update(accessTokens)
    .set({ lastUsedAt: at })
    .where(and(eq(accessTokens.id, id), sql`coalesce(${accessTokens.lastUsedAt}, 0) < ${at - 60}`))
}
