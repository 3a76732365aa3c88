import type { Database } from '../../storage/database'
import { findUserById, type UserRow } from '../store'
import { newAccessToken, sameDigest, sha256Hex } from './secrets'
import * as store from './store'

export interface TokenSignIn {
  user: UserRow
  token: store.AccessTokenRow
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Creates a token and returns its row with the plaintext, which is never stored. Throws duplicate. */
export async function mintToken(
  db: Database,
  uid: number,
  fields: { name: string; scopes: readonly string[]; expiresAt?: number | null },
): Promise<{ row: store.AccessTokenRow; plaintext: string }> {
  const plaintext = newAccessToken()
  const row = await db.write((tx) => store.insertToken(tx, {
    uid,
    name: fields.name,
    tokenHash: sha256Hex(plaintext),
    tokenLastEight: plaintext.slice(-8),
    scopes: fields.scopes.join(','),
    expiresAt: fields.expiresAt ?? null,
  }))
  return { row, plaintext }
}

/**
 * Token sign-ins by token digest, valid while the database's change counter stands still:
 * any commit anywhere (a revoked token, a prohibited user) empties it, so it is never stale.
 */
const signInCaches = new WeakMap<Database, Map<string, { counter: string; found: TokenSignIn }>>()
const SIGN_IN_CACHE_LIMIT = 10_000

/**
 * Finds the live token matching `plaintext` and its user. Candidates are narrowed by the last
 * eight characters; the hash is compared in constant time. Expired tokens and users who may not
 * sign in give undefined.
 */
export async function authenticateToken(db: Database, plaintext: string): Promise<TokenSignIn | undefined> {
  if (plaintext.length < 8 || plaintext.length > 256) return undefined
  const digest = sha256Hex(plaintext)
  const counter = db.changeCounter() // read before the rows: a commit after this point misses next time
  let cache = signInCaches.get(db)
  if (!cache) signInCaches.set(db, (cache = new Map()))
  const cached = cache.get(digest)
  const found = cached && cached.counter === counter ? cached.found : await lookUpToken(db, plaintext, digest)
  if (!found || isExpired(found.token)) {
    cache.delete(digest)
    return undefined
  }
  if (cache.size >= SIGN_IN_CACHE_LIMIT) cache.clear()
  cache.set(digest, { counter, found })
  markUsed(db, found.token)
  return found
}

/** Activity is kept to the minute: one write per token per minute, off the request's path. */
function markUsed(db: Database, token: store.AccessTokenRow): void {
  const now = nowSeconds()
  if ((token.lastUsedAt ?? 0) < now - 60) db.write((tx) => store.markTokenUsed(tx, token.id, now)).catch(() => undefined)
}

const isExpired = (token: store.AccessTokenRow) => token.expiresAt !== null && token.expiresAt <= nowSeconds()

async function lookUpToken(db: Database, plaintext: string, digest: string): Promise<TokenSignIn | undefined> {
  const candidates = await store.findTokensByLastEight(db.read, plaintext.slice(-8))
  const token = candidates.find((row) => sameDigest(row.tokenHash, digest))
  if (!token) return undefined
  const user = await findUserById(db.read, token.uid)
  if (!user || !user.isActive || user.prohibitLogin) return undefined
  return { user, token }
}

export const scopesOf = (token: store.AccessTokenRow): string[] => token.scopes.split(',').filter(Boolean)
