import { and, asc, eq, sql } from 'drizzle-orm'
import { twoFactors, users } from '../../db/schema'
import type { Executor } from '../storage/database'
import { isUniqueViolation } from '../storage/database'
import { AppError } from '../http/errors'

export type UserRow = typeof users.$inferSelect
export type NewUser = typeof users.$inferInsert

export const USER_TYPE = { individual: 0, organization: 1 } as const

export async function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.id, id)).get()
}

/** Individual or organization by name, case-insensitively. */
export async function findAccountByName(db: Executor, name: string): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.lowerName, name.toLowerCase())).get()
}

/** An individual user (not an organization) by name, case-insensitively. */
export async function findUserByName(db: Executor, name: string): Promise<UserRow | undefined> {
  return db.select().from(users)
    .where(and(eq(users.lowerName, name.toLowerCase()), eq(users.type, USER_TYPE.individual))).get()
}

/** An individual user by primary email, case-insensitively. */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.select().from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, eq(users.type, USER_TYPE.individual))).get()
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db.select({ n: sql<number>`count(*)` }).from(users).where(eq(users.type, USER_TYPE.individual)).get()
  return row?.n ?? 0
}

/** Inserts an account; a taken name is `duplicate`. */
export async function insertUser(db: Executor, user: NewUser): Promise<UserRow> {
  try {
    const [row] = await db.insert(users).values(user).returning()
    return row
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', 'user already exists', [{ field: 'username', message: 'is already taken' }]) : e
  }
}

export async function updateUser(db: Executor, id: number, changes: Partial<NewUser>): Promise<UserRow | undefined> {
  const [row] = await db.update(users).set({ ...changes, updatedAt: new Date() }).where(eq(users.id, id)).returning()
  return row
}

/** Whether the user has finished TOTP enrollment (sign-in then needs a second factor). */
export async function hasTwoFactor(db: Executor, uid: number): Promise<boolean> {
  const row = await db.select({ id: twoFactors.id }).from(twoFactors).where(eq(twoFactors.uid, uid)).get()
  return row !== undefined
}

/** The oldest site administrator, if any. */
export async function findFirstSiteAdmin(db: Executor): Promise<UserRow | undefined> {
  return db.select().from(users).where(and(eq(users.isAdmin, true), eq(users.type, USER_TYPE.individual))).orderBy(asc(users.id)).get()
}
