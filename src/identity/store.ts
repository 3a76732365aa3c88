import { and, asc, eq, inArray, or, type SQL, sql } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import { USER_TYPE } from '../../db/schema/codes'
import { accessTokens, emailAddresses, follows, sessions, users } from '../../db/schema/identity'
import { twoFactors } from '../../db/schema/security'
import { AppError } from '../errors'
import type { Executor } from '../storage/database'
import { isUniqueViolation } from '../storage/database'
import { prepared } from '../storage/prepared'

export type UserRow = typeof users.$inferSelect
export type NewUser = typeof users.$inferInsert

/**
 * The accounts (users and organizations) as another area joins them in its own queries, to order
 * by name or return whole rows in one statement: read-only (writes go through this module), and
 * SQLite flattens it into the outer query, so it costs what a join on the table costs.
 */
export const accounts = new QueryBuilder().select().from(users).as('accounts')
/** The columns of `accounts`, to select whole account rows (`UserRow`) from a join on it. */
export const accountRow = accounts._.selectedFields

/** Gitea's user types; `bot` is a service user (an org system admin) that never signs in with a password. */
const userById = (db: Executor) =>
  db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare()

export async function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  return prepared(db, userById).get({ id })
}

/** Which of `ids` are accounts on record (a user or an org that was not deleted). */
export async function existingAccountIds(db: Executor, ids: readonly number[]): Promise<Set<number>> {
  const found = new Set<number>()
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .select({ id: users.id })
      .from(users)
      .where(inArray(users.id, ids.slice(i, i + 500)))
      .all()
    for (const row of rows) found.add(row.id)
  }
  return found
}

/** Individual or organization by name, case-insensitively. */
export async function findAccountByName(db: Executor, name: string): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.lowerName, name.toLowerCase())).get()
}

/** An individual user (not an organization) by name, case-insensitively. */
export async function findUserByName(db: Executor, name: string): Promise<UserRow | undefined> {
  return db
    .select()
    .from(users)
    .where(and(eq(users.lowerName, name.toLowerCase()), eq(users.type, USER_TYPE.individual)))
    .get()
}

/** An individual user by primary email, case-insensitively. */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db
    .select()
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, eq(users.type, USER_TYPE.individual)))
    .get()
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db.select({ n: sql<number>`count(*)` }).from(users).where(eq(users.type, USER_TYPE.individual)).get()
  return row?.n ?? 0
}

export async function countAdmins(db: Executor): Promise<number> {
  const row = await db
    .select({ n: sql<number>`count(*)` })
    .from(users)
    .where(and(eq(users.isAdmin, true), eq(users.type, USER_TYPE.individual)))
    .get()
  return row?.n ?? 0
}

export const StoreMessages = {
  nameTaken: 'user already exists',
  emailTaken: 'Email address has been used',
} as const

/**
 * Inserts an account; an individual's primary email gets its email_addresses row in the same
 * unit. A taken name or email is `duplicate`.
 */
export async function insertUser(db: Executor, user: NewUser): Promise<UserRow> {
  let row: UserRow
  try {
    ;[row] = await db.insert(users).values(user).returning()
  } catch (e) {
    throw isUniqueViolation(e)
      ? new AppError('duplicate', StoreMessages.nameTaken, [{ field: 'username', message: 'is already taken' }])
      : e
  }
  if (row.type === USER_TYPE.individual && row.email !== '') {
    try {
      await db.insert(emailAddresses).values({ uid: row.id, email: row.email, lowerEmail: row.email.toLowerCase(), isPrimary: true })
    } catch (e) {
      throw isUniqueViolation(e)
        ? new AppError('duplicate', StoreMessages.emailTaken, [{ field: 'email', message: 'is already used by another account' }])
        : e
    }
  }
  return row
}

/** An individual user owning `email` (any of their addresses, case-insensitively). */
export async function findUserByAnyEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const owner = await db
    .select({ uid: emailAddresses.uid })
    .from(emailAddresses)
    .where(eq(emailAddresses.lowerEmail, email.toLowerCase()))
    .get()
  return owner ? findUserById(db, owner.uid) : findUserByEmail(db, email)
}

/** Which users a search may return: visibility levels allowed, plus the viewer's own row. */
export interface SearchFilter {
  q: string
  uid?: number
  visibilities: number[] | 'all'
  selfId?: number
}

function searchCondition(filter: SearchFilter): SQL | undefined {
  const parts: (SQL | undefined)[] = [eq(users.type, USER_TYPE.individual)]
  if (filter.uid !== undefined) parts.push(eq(users.id, filter.uid))
  if (filter.q !== '') {
    const pattern = `%${filter.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    parts.push(or(sql`${users.lowerName} like ${pattern} escape '\\'`, sql`lower(${users.fullName}) like ${pattern} escape '\\'`))
  }
  if (filter.visibilities !== 'all') {
    const visible = inArray(users.visibility, filter.visibilities)
    parts.push(filter.selfId === undefined ? visible : or(visible, eq(users.id, filter.selfId)))
  }
  return and(...parts)
}

/** A page of individual users matching `filter`, by name, and the total count. */
export async function searchUsers(
  db: Executor,
  filter: SearchFilter,
  limit: number,
  offset: number,
): Promise<{ rows: UserRow[]; total: number }> {
  const where = searchCondition(filter)
  const rows = await db.select().from(users).where(where).orderBy(asc(users.lowerName)).limit(limit).offset(offset).all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(users).where(where).get()
  return { rows, total: count?.n ?? 0 }
}

/**
 * Deletes the account and the identity rows hanging off it. They also cascade by foreign key, but
 * the deletes are spelled out so a connection without `PRAGMA foreign_keys` leaves no orphans
 * (an orphaned address would stay taken forever). Other areas' tables rely on their cascades.
 */
export async function deleteUser(db: Executor, id: number): Promise<void> {
  await db.delete(sessions).where(eq(sessions.uid, id))
  await db.delete(accessTokens).where(eq(accessTokens.uid, id))
  await db.delete(emailAddresses).where(eq(emailAddresses.uid, id))
  await db.delete(follows).where(or(eq(follows.userId, id), eq(follows.followId, id)))
  await db.delete(users).where(eq(users.id, id))
}

export async function updateUser(db: Executor, id: number, changes: Partial<NewUser>): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(users.id, id))
    .returning()
  return row
}

/** Whether the user has finished TOTP enrollment (sign-in then needs a second factor). */
export async function hasTwoFactor(db: Executor, uid: number): Promise<boolean> {
  const row = await db.select({ id: twoFactors.id }).from(twoFactors).where(eq(twoFactors.uid, uid)).get()
  return row !== undefined
}

/** The oldest site administrator, if any. */
export async function findFirstSiteAdmin(db: Executor): Promise<UserRow | undefined> {
  return db
    .select()
    .from(users)
    .where(and(eq(users.isAdmin, true), eq(users.type, USER_TYPE.individual)))
    .orderBy(asc(users.id))
    .get()
}
