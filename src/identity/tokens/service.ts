import { type ScopeCategory, scopesAllow, TOKEN_SCOPES } from '../../authz/actor'
import { AppError } from '../../errors'
import type { Paged } from '../../http/pagination'
import { commitCache, NOT_CACHED } from '../../storage/commit-cache'
import type { Database } from '../../storage/database'
import { findUserById, type UserRow } from '../store'
import { newAccessToken, sameDigest, sha256Hex } from './secrets'
import * as store from './store'

export interface TokenSignIn {
  user: UserRow
  token: store.AccessTokenRow
}

/**
 * Creates a token and returns its row with the plaintext, which is never stored. A kubeconfig's
 * token (`kubeconfigClusterId`) is limited to that cluster and replaces, in the same commit, the
 * user's previous token of the same name for it (docs/decisions.md §12). Throws duplicate.
 */
export async function mintToken(
  db: Database,
  uid: number,
  fields: { name: string; scopes: readonly string[]; expiresAt?: number | null; kubeconfigClusterId?: number },
): Promise<{ row: store.AccessTokenRow; plaintext: string }> {
  const plaintext = newAccessToken()
  const clusterId = fields.kubeconfigClusterId
  const row = await db.write(async (tx) => {
    if (clusterId !== undefined) await store.deleteKubeconfigToken(tx, uid, fields.name, clusterId)
    return store.insertToken(tx, {
      uid,
      name: fields.name,
      tokenHash: sha256Hex(plaintext),
      tokenLastEight: plaintext.slice(-8),
      scopes: fields.scopes.join(','),
      expiresAt: fields.expiresAt ?? null,
      kubeconfigClusterId: clusterId ?? null,
    })
  })
  return { row, plaintext }
}

/** Token sign-ins by token digest: a revoked token or prohibited user is a commit, which empties it. */
const signInCache = commitCache<TokenSignIn | undefined>()

/**
 * Finds the live token matching `plaintext` and its user. Candidates are narrowed by the last
 * eight characters; the hash is compared in constant time. Tokens expired at `now` (epoch seconds)
 * and users who may not sign in give undefined.
 */
export async function authenticateToken(db: Database, plaintext: string, now: number): Promise<TokenSignIn | undefined> {
  if (!plausibleToken(plaintext)) return undefined
  const digest = sha256Hex(plaintext)
  return admitted(db, await signInCache(db, digest, () => lookUpToken(db, plaintext, digest)), now)
}

/**
 * authenticateToken's answer when this process looked `plaintext` up since the last commit and found a live
 * token, decided without waiting (every request of a script after its first); undefined when not known here.
 */
export function knownTokenSignIn(db: Database, plaintext: string, now: number): TokenSignIn | undefined {
  const found = plausibleToken(plaintext) ? signInCache.peek(db, sha256Hex(plaintext)) : NOT_CACHED
  return found === NOT_CACHED ? undefined : admitted(db, found, now)
}

const plausibleToken = (plaintext: string) => plaintext.length >= 8 && plaintext.length <= 256

/** A found token that has not expired at `now`, its use noted. */
function admitted(db: Database, found: TokenSignIn | undefined, now: number): TokenSignIn | undefined {
  if (!found || isExpired(found.token, now)) return undefined
  markUsed(db, found.token, now)
  return found
}

/** Activity is kept to the minute: one write per token per minute, off the request's path. */
function markUsed(db: Database, token: store.AccessTokenRow, now: number): void {
  if ((token.lastUsedAt ?? 0) < now - 60) db.write((tx) => store.markTokenUsed(tx, token.id, now)).catch(() => undefined)
}

const isExpired = (token: store.AccessTokenRow, now: number) => token.expiresAt !== null && token.expiresAt <= now

async function lookUpToken(db: Database, plaintext: string, digest: string): Promise<TokenSignIn | undefined> {
  const candidates = await store.findTokensByLastEight(db.read, plaintext.slice(-8))
  const token = candidates.find((row) => sameDigest(row.tokenHash, digest))
  if (!token) return undefined
  const user = await findUserById(db.read, token.uid)
  if (!user?.isActive || user.prohibitLogin) return undefined
  return { user, token }
}

export const scopesOf = (token: store.AccessTokenRow): string[] => token.scopes.split(',').filter(Boolean)

export const Messages = {
  tokenNotFound: 'access token does not exist',
  scopeUnknown: 'invalid access token scope provided',
  scopeMissing: 'access token must have a scope',
  scopeBeyondCaller: 'a token cannot create a token with scopes it does not have',
  expiryInPast: 'expDate must be in the future',
  nameMissing: 'access token name is required',
} as const

/** Used within this many seconds counts as recent activity (docs/decisions.md §2). */
export const RECENT_ACTIVITY_SECONDS = 7 * 24 * 3600

/**
 * Checks requested scopes: known names only, at least one, and — when the caller is itself a
 * scoped token — none beyond what that token may do (no minting broader tokens).
 * Throws invalid or forbidden.
 */
export function checkRequestedScopes(requested: readonly string[] | undefined, callerScopes: readonly string[] | undefined): string[] {
  const scopes = [...new Set((requested ?? ['all']).map((s) => s.trim()).filter(Boolean))]
  if (scopes.length === 0) throw new AppError('invalid', Messages.scopeMissing, [{ field: 'scopes', message: Messages.scopeMissing }])
  const unknown = scopes.filter((s) => !(TOKEN_SCOPES as readonly string[]).includes(s))
  if (unknown.length > 0)
    throw new AppError('invalid', `${Messages.scopeUnknown}: ${unknown.join(', ')}`, [{ field: 'scopes', message: Messages.scopeUnknown }])
  if (callerScopes !== undefined && !callerScopes.includes('all')) {
    const allowed = (scope: string) => {
      if (scope === 'all') return false
      const [level, category] = scope.split(':') as ['read' | 'write', ScopeCategory]
      return scopesAllow(callerScopes, level, category)
    }
    if (!scopes.every(allowed)) throw new AppError('forbidden', Messages.scopeBeyondCaller)
  }
  return scopes
}

function checkName(name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') throw new AppError('invalid', Messages.nameMissing, [{ field: 'name', message: Messages.nameMissing }])
  return trimmed
}

export async function listTokens(db: Database, uid: number, page: { limit: number; offset: number }): Promise<Paged<store.AccessTokenRow>> {
  const { rows, total } = await store.listTokensPage(db.read, uid, page.limit, page.offset)
  return { items: rows, total }
}

/**
 * Creates a token for `uid` and returns it with its plaintext (shown once); `now` (epoch seconds)
 * judges the expiry. Throws invalid (name,
 * scopes, expiry), duplicate (name in use by this user) or forbidden (scopes beyond the caller's).
 */
export async function createToken(
  db: Database,
  uid: number,
  input: { name: string; scopes?: readonly string[]; expDate?: number },
  callerScopes: readonly string[] | undefined,
  now: number,
): Promise<{ row: store.AccessTokenRow; plaintext: string }> {
  const name = checkName(input.name)
  const scopes = checkRequestedScopes(input.scopes, callerScopes)
  if (input.expDate !== undefined && input.expDate !== 0 && input.expDate <= now)
    throw new AppError('invalid', Messages.expiryInPast, [{ field: 'expDate', message: Messages.expiryInPast }])
  return mintToken(db, uid, { name, scopes, expiresAt: input.expDate ? input.expDate : null })
}

/** Deletes `uid`'s token named by a positive integer id or else by its name. Throws notFound. */
export async function deleteTokenByIdOrName(db: Database, uid: number, idOrName: string): Promise<void> {
  const token = /^[1-9]\d{0,15}$/.test(idOrName)
    ? await store.findTokenOfUser(db.read, uid, Number(idOrName))
    : await store.findTokenOfUserByName(db.read, uid, idOrName)
  if (!token) throw new AppError('notFound', Messages.tokenNotFound)
  await db.write((tx) => store.deleteTokensOfUser(tx, uid, [token.id]))
}

/** Deletes `uid`'s token `id`. Throws notFound when it is not theirs. */
export async function deleteToken(db: Database, uid: number, id: number): Promise<void> {
  const gone = await db.write((tx) => store.deleteTokensOfUser(tx, uid, [id]))
  if (gone === 0) throw new AppError('notFound', Messages.tokenNotFound)
}

/** Deletes those of `ids` that are `uid`'s tokens; others are ignored. Returns how many went. */
export async function deleteTokenRecords(db: Database, uid: number, ids: number[]): Promise<number> {
  return db.write((tx) => store.deleteTokensOfUser(tx, uid, [...new Set(ids)]))
}

/** Gitea's AccessToken: `sha1` carries the plaintext on creation only. */
export function presentAccessToken(row: store.AccessTokenRow, plaintext = '') {
  return { id: row.id, name: row.name, sha1: plaintext, token_last_eight: row.tokenLastEight, scopes: scopesOf(row) }
}

/** The settings view (docs/decisions.md §2) at `now` (epoch seconds): Unix times, activity flags, `token` only on creation. */
export function presentSettingsToken(row: store.AccessTokenRow, now: number, plaintext = '') {
  const created = Math.floor(row.createdAt.getTime() / 1000)
  return {
    id: row.id,
    uid: row.uid,
    name: row.name,
    token: plaintext,
    tokenLastEight: row.tokenLastEight,
    scopes: scopesOf(row),
    createdAt: created,
    updatedAt: row.lastUsedAt ?? created,
    expDate: row.expiresAt ?? 0,
    hasRecentActivity: row.lastUsedAt !== null && row.lastUsedAt > now - RECENT_ACTIVITY_SECONDS,
    hasUsed: row.lastUsedAt !== null,
  }
}
