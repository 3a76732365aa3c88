import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { follows, users } from '../../../db/schema/identity'
import type { Executor } from '../../storage/database'
import { prepared } from '../../storage/prepared'
import type { UserRow } from '../store'

/** Who may appear in a list the viewer reads: visibility levels, plus the viewer's own row. */
export interface VisibleTo {
  visibilities: number[] | 'all'
  selfId?: number
}

function visibleCondition(visible: VisibleTo) {
  if (visible.visibilities === 'all') return undefined
  const levels = inArray(users.visibility, visible.visibilities)
  return visible.selfId === undefined ? levels : sql`(${levels} or ${users.id} = ${visible.selfId})`
}

/** A page of the users following `uid` (or followed by `uid`), by name, and the total. */
export async function listFollowRelations(
  db: Executor,
  direction: 'followers' | 'following',
  uid: number,
  visible: VisibleTo,
  limit: number,
  offset: number,
): Promise<{ rows: UserRow[]; total: number }> {
  const [mine, theirs] = direction === 'followers' ? [follows.followId, follows.userId] : [follows.userId, follows.followId]
  const where = and(eq(mine, uid), visibleCondition(visible))
  const rows = await db
    .select({ user: users })
    .from(follows)
    .innerJoin(users, eq(users.id, theirs))
    .where(where)
    .orderBy(asc(users.lowerName))
    .limit(limit)
    .offset(offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(follows).innerJoin(users, eq(users.id, theirs)).where(where).get()
  return { rows: rows.map((r) => r.user), total: count?.n ?? 0 }
}

export async function isFollowing(db: Executor, userId: number, followId: number): Promise<boolean> {
  const row = await db
    .select({ id: follows.id })
    .from(follows)
    .where(and(eq(follows.userId, userId), eq(follows.followId, followId)))
    .get()
  return row !== undefined
}

/** Records the relation; an existing one is left as is. */
export async function insertFollow(db: Executor, userId: number, followId: number): Promise<void> {
  await db.insert(follows).values({ userId, followId }).onConflictDoNothing()
}

export async function deleteFollow(db: Executor, userId: number, followId: number): Promise<void> {
  await db.delete(follows).where(and(eq(follows.userId, userId), eq(follows.followId, followId)))
}

/** Follower and following counts of each of `ids`. */
const countsOfOne = (db: Executor) =>
  db
    .select({
      followers: sql<number>`(select count(*) from ${follows} where ${follows.followId} = ${sql.placeholder('id')})`,
      following: sql<number>`(select count(*) from ${follows} where ${follows.userId} = ${sql.placeholder('id')})`,
    })
    .from(sql`(select 1)`)
    .prepare()

export async function followCounts(db: Executor, ids: number[]): Promise<Map<number, { followers: number; following: number }>> {
  const counts = new Map(ids.map((id) => [id, { followers: 0, following: 0 }]))
  if (ids.length === 0) return counts
  if (ids.length === 1) {
    // The profile of one user (GET /user, /users/{u}) is a hot path: one prepared query.
    const row = await prepared(db, countsOfOne).get({ id: ids[0] })
    counts.set(ids[0], { followers: row?.followers ?? 0, following: row?.following ?? 0 })
    return counts
  }
  // A follow row counts for its followed user (followId) as a follower, for its follower (userId) as following.
  const countsBy = (column: typeof follows.followId | typeof follows.userId) =>
    db.select({ id: column, n: sql<number>`count(*)` }).from(follows).where(inArray(column, ids)).groupBy(column).all()
  for (const row of await countsBy(follows.followId)) counts.get(row.id)!.followers = row.n
  for (const row of await countsBy(follows.userId)) counts.get(row.id)!.following = row.n
  return counts
}
