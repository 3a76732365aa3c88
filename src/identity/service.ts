import { VISIBILITY, VISIBILITY_NAMES, type VisibilityName } from '../../db/schema/codes'
import { selfOrAdmin } from '../authz/authorize'
import { rfc3339 } from '../clock'
import { AppError } from '../errors'
import type { Database } from '../storage/database'
import { checkName } from './names'
import { hashPassword } from './passwords'
import type { EditUserOption, User } from './schemas'
import * as store from './store'

export const Messages = {
  nameInvalid: 'name is invalid: letters, digits, "-", "_" and "." only, starting with a letter or digit, at most 40 characters',
  nameReserved: 'name is reserved',
  nameNotAllowed: 'name pattern is not allowed',
  emailInvalid: 'email address is invalid',
  passwordTooShort: 'password must be at least 8 characters',
  userNotFound: 'user does not exist',
  disableSelf: 'site administrators cannot disable their own account',
} as const

export const MIN_PASSWORD_LENGTH = 8

export interface NewUserInput {
  username: string
  email: string
  password: string
  fullName?: string
  isAdmin?: boolean
  mustChangePassword?: boolean
  visibility?: VisibilityName
  /** Operator-chosen names (the first admin, default "admin") may be reserved words. */
  allowReservedName?: boolean
}

/** Throws `invalid` naming `field` unless `name` is a usable user or organization name. */
export function assertUsableName(name: string, field: string, allowReserved = false): void {
  const verdict = checkName(name)
  if (verdict === 'RESERVED' && allowReserved) return
  if (verdict === 'INVALID') throw new AppError('invalid', Messages.nameInvalid, [{ field, message: Messages.nameInvalid }])
  if (verdict === 'RESERVED') throw new AppError('invalid', Messages.nameReserved, [{ field, message: Messages.nameReserved }])
  if (verdict === 'NOT_ALLOWED') throw new AppError('invalid', Messages.nameNotAllowed, [{ field, message: Messages.nameNotAllowed }])
}

export const isEmailAddress = (email: string) => email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email)

/** Creates an individual account. Throws invalid (name, email, password) or duplicate (name taken). */
export async function createUser(db: Database, input: NewUserInput): Promise<store.UserRow> {
  const row = await newUserRow(input)
  return db.write((tx) => store.insertUser(tx, row))
}

/** The row of a new account, its password hashed. Throws invalid (name, email, password). */
async function newUserRow(input: NewUserInput): Promise<Parameters<typeof store.insertUser>[1]> {
  assertUsableName(input.username, 'username', input.allowReservedName)
  if (!isEmailAddress(input.email))
    throw new AppError('invalid', Messages.emailInvalid, [{ field: 'email', message: Messages.emailInvalid }])
  if (input.password.length < MIN_PASSWORD_LENGTH)
    throw new AppError('invalid', Messages.passwordTooShort, [{ field: 'password', message: Messages.passwordTooShort }])
  return {
    name: input.username,
    lowerName: input.username.toLowerCase(),
    email: input.email,
    fullName: input.fullName ?? '',
    passwordHash: await hashPassword(input.password),
    isAdmin: input.isAdmin ?? false,
    mustChangePassword: input.mustChangePassword ?? false,
    visibility: VISIBILITY[input.visibility ?? 'public'],
    // Privacy by default (docs/decisions.md §2): others see a real address only once its owner shares it.
    keepEmailPrivate: true,
  }
}

/**
 * A site admin's change to `username`'s account (Gitea's EditUserOption; only `prohibit_login` here). An admin
 * may not disable their own account, so the site keeps a way in. Throws notFound, conflict.
 */
export async function editUser(db: Database, admin: store.UserRow, username: string, option: EditUserOption): Promise<store.UserRow> {
  const user = await store.findUserByName(db.read, username)
  if (!user) throw new AppError('notFound', Messages.userNotFound)
  if (option.prohibit_login === undefined) return user
  if (option.prohibit_login && user.id === admin.id) throw new AppError('conflict', Messages.disableSelf)
  const updated = await db.write((tx) => store.updateUser(tx, user.id, { prohibitLogin: option.prohibit_login }))
  if (!updated) throw new AppError('notFound', Messages.userNotFound)
  return updated
}

/**
 * Creates the first site admin when the database has no user yet. Returns the generated
 * password when none was configured (to be printed once), or undefined. Decided inside the write:
 * of several processes (machines) starting at once on an empty database, one creates it.
 */
export async function ensureFirstAdmin(
  db: Database,
  seed: { username: string; password: string | undefined; email: string },
): Promise<{ created: boolean; generatedPassword?: string }> {
  if ((await store.countUsers(db.read)) > 0) return { created: false }
  const generatedPassword =
    seed.password === undefined ? Buffer.from(crypto.getRandomValues(new Uint8Array(15))).toString('base64url') : undefined
  const row = await newUserRow({
    username: seed.username,
    email: seed.email,
    password: seed.password ?? generatedPassword!,
    isAdmin: true,
    allowReservedName: true,
  })
  const created = await db.write(async (tx) => {
    if ((await store.countUsers(tx)) > 0) return false
    await store.insertUser(tx, row)
    return true
  })
  return created ? { created, generatedPassword } : { created }
}

const ZERO_TIME = '1970-01-01T00:00:00Z'
const iso = (date: Date | null) => (date ? rfc3339(date) : ZERO_TIME)

const hosts = new Map<string, string>()
const hostOf = (url: string) => hosts.get(url) ?? hosts.set(url, new URL(url).hostname).get(url)!

/** Who is looking at a user, for Gitea's disclosure rules. */
export interface Viewer {
  user: store.UserRow | undefined
  publicUrl: string
}

/**
 * The email `viewer` may see of `user` (docs/decisions.md §2): the real one for the user themself
 * and site admins, and for other signed-in users unless the user keeps it private; otherwise (and
 * always for anonymous callers) a noreply placeholder. Every answer showing a user's email uses it.
 */
export function emailShownTo(user: store.UserRow, viewer: Viewer): string {
  const visible = selfOrAdmin(viewer.user, user) || (viewer.user !== undefined && !user.keepEmailPrivate)
  return visible ? user.email : `${user.lowerName}@noreply.${hostOf(viewer.publicUrl)}`
}

/**
 * The User as `viewer` may see it: email, admin flag, last login, language, active and
 * prohibit-login are real only for the user and site admins; anonymous callers and, when the
 * user hides it, other users get a noreply placeholder email.
 */
export function presentUser(
  user: store.UserRow,
  viewer: Viewer,
  extra: { orgAdmin?: boolean; clientOrgUser?: boolean; followers?: number; following?: number } = {},
): User {
  const authed = selfOrAdmin(viewer.user, user)
  return {
    id: user.id,
    login: user.name,
    username: user.name,
    login_name: '',
    full_name: user.fullName,
    email: emailShownTo(user, viewer),
    avatar_url: `${viewer.publicUrl}/avatars/${encodeURIComponent(user.lowerName)}`,
    language: authed ? user.language : '',
    is_admin: authed ? user.isAdmin : false,
    last_login: authed ? iso(user.lastLoginAt) : ZERO_TIME,
    created: iso(user.createdAt),
    restricted: false,
    type: user.type,
    active: authed ? user.isActive : false,
    prohibit_login: authed ? user.prohibitLogin : false,
    location: user.location,
    website: user.website,
    description: user.description,
    visibility: VISIBILITY_NAMES[user.visibility] ?? 'public',
    followers_count: extra.followers ?? 0,
    following_count: extra.following ?? 0,
    starred_repos_count: 0,
    orgAdmin: extra.orgAdmin ?? false,
    ...(extra.clientOrgUser === undefined ? {} : { clientOrgUser: extra.clientOrgUser }),
  }
}
