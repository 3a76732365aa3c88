import { VISIBILITY } from '../../../db/schema/codes'
import { userVisibleTo } from '../../authz/authorize'
import { AppError } from '../../errors'
import type { Page, Paged } from '../../http/pagination'
import type { MaybePromise } from '../../maybe-promise'
import { commitCache } from '../../storage/commit-cache'
import type { Database } from '../../storage/database'
import * as followStore from '../follows/store'
import { checkName } from '../names'
import type { User } from '../schemas'
import { isEmailAddress, presentUser } from '../service'
import * as store from '../store'

export const Messages = {
  userNotFound: 'user does not exist',
  notFollowing: 'the user is not followed',
} as const

/** Who is reading: the signed-in user (or undefined) and the base for absolute links. */
export interface Reader {
  user: store.UserRow | undefined
  publicUrl: string
}

/**
 * Decisions §1 visibility for lists: anonymous readers see public users; signed-in readers also
 * limited ones and themselves; site admins everyone.
 */
export function visibleTo(reader: Reader): followStore.VisibleTo {
  if (!reader.user) return { visibilities: [VISIBILITY.public] }
  if (reader.user.isAdmin) return { visibilities: 'all' }
  return { visibilities: [VISIBILITY.public, VISIBILITY.limited], selfId: reader.user.id }
}

/** Whether `reader` may see `user`'s profile; hidden users answer 404, never 403. */
const canSee = (reader: Reader, user: store.UserRow): boolean => userVisibleTo(user, reader.user)

/** Users as `reader` may see them, with their follow counters. */
async function presentUsers(db: Database, rows: store.UserRow[], reader: Reader): Promise<User[]> {
  const counts = await followStore.followCounts(
    db.read,
    rows.map((row) => row.id),
  )
  return rows.map((row) => presentUser(row, reader, counts.get(row.id)))
}

export async function presentOne(db: Database, row: store.UserRow, reader: Reader, extra: { clientOrgUser?: boolean } = {}): Promise<User> {
  const counts = (await followStore.followCounts(db.read, [row.id])).get(row.id)
  return presentUser(row, reader, { ...counts, ...extra })
}

/** `GET /user`, what scripts ask most: the caller's own profile, recomputed only after a commit. */
const ownProfiles = commitCache<User>()

export function presentSelf(db: Database, me: store.UserRow, publicUrl: string, extra: { clientOrgUser?: boolean }): Promise<User> {
  return ownProfiles(db, `${me.id}:${publicUrl}:${extra.clientOrgUser ?? ''}`, () => presentOne(db, me, { user: me, publicUrl }, extra))
}

const ownProfileTexts = commitCache<string>()

/**
 * The caller's own profile as JSON text, serialised once per commit and given at once while cached: the lean
 * `GET /user` (identity/routes.ts) sends it as is.
 */
export function presentSelfText(db: Database, me: store.UserRow, publicUrl: string): MaybePromise<string> {
  return ownProfileTexts.now(db, `${me.id}:${publicUrl}`, async () => JSON.stringify(await presentSelf(db, me, publicUrl, {})))
}

/** The individual user `name` if `reader` may see it. Throws notFound otherwise. */
export async function findVisibleUser(db: Database, reader: Reader, name: string): Promise<store.UserRow> {
  const user = await store.findUserByName(db.read, name)
  if (!user || !canSee(reader, user)) throw new AppError('notFound', Messages.userNotFound)
  return user
}

/**
 * Individual users matching `q` (name or full name substring) and/or `uid`, as `reader` may see
 * them; a `uid` that is not an integer is ignored, like Gitea's lenient query parsing.
 */
export async function searchUsers(db: Database, reader: Reader, query: { q?: string; uid?: string }, page: Page): Promise<Paged<User>> {
  const visible = visibleTo(reader)
  const uid = query.uid !== undefined && /^-?\d{1,15}$/.test(query.uid) ? Number(query.uid) : undefined
  const { rows, total } = await store.searchUsers(db.read, { q: (query.q ?? '').trim(), uid, ...visible }, page.limit, page.offset)
  return { items: await presentUsers(db, rows, reader), total }
}

/** A page of `user`'s followers or followed users that `reader` may see. */
export async function listFollowRelations(
  db: Database,
  reader: Reader,
  user: store.UserRow,
  direction: 'followers' | 'following',
  page: Page,
): Promise<Paged<User>> {
  const { rows, total } = await followStore.listFollowRelations(db.read, direction, user.id, visibleTo(reader), page.limit, page.offset)
  return { items: await presentUsers(db, rows, reader), total }
}

/** Resolves when `follower` follows `target` (both visible to `reader`). Throws notFound otherwise. */
export async function assertFollowing(db: Database, reader: Reader, followerName: string, targetName: string): Promise<void> {
  const follower = await findVisibleUser(db, reader, followerName)
  const target = await findVisibleUser(db, reader, targetName)
  if (!(await followStore.isFollowing(db.read, follower.id, target.id))) throw new AppError('notFound', Messages.notFollowing)
}

/** `me` follows `name`; following oneself or someone already followed changes nothing. Throws notFound. */
export async function follow(db: Database, me: store.UserRow, name: string): Promise<void> {
  const target = await findVisibleUser(db, { user: me, publicUrl: '' }, name)
  if (target.id === me.id) return
  await db.write((tx) => followStore.insertFollow(tx, me.id, target.id))
}

/** `me` stops following `name`; not following is a no-op. Throws notFound for an unknown user. */
export async function unfollow(db: Database, me: store.UserRow, name: string): Promise<void> {
  const target = await findVisibleUser(db, { user: me, publicUrl: '' }, name)
  await db.write((tx) => followStore.deleteFollow(tx, me.id, target.id))
}

export type ValidationStatus = 'VALID' | 'USER_EXISTS' | 'RESERVED' | 'INVALID' | 'NOT_ALLOWED'

/**
 * Checks a proposed user or organization name in docs/decisions.md §1 order: INVALID, RESERVED,
 * NOT_ALLOWED, USER_EXISTS (users and orgs share one namespace), VALID. `currentName` is the
 * account being renamed: keeping its own name (in any case) is VALID.
 */
export async function validateName(db: Database, name: string, currentName?: string): Promise<ValidationStatus> {
  const verdict = checkName(name)
  if (verdict !== 'VALID') return verdict
  if (currentName !== undefined && currentName.toLowerCase() === name.toLowerCase()) return 'VALID'
  return (await store.findAccountByName(db.read, name)) ? 'USER_EXISTS' : 'VALID'
}

/** INVALID for a malformed address, USER_EXISTS when any account holds it, else VALID. */
export async function validateEmail(db: Database, email: string): Promise<ValidationStatus> {
  if (!isEmailAddress(email.trim())) return 'INVALID'
  return (await store.findUserByAnyEmail(db.read, email.trim())) ? 'USER_EXISTS' : 'VALID'
}
