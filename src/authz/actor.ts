import type { users } from '../../db/schema/identity'
import { AppError } from '../errors'

type UserRow = typeof users.$inferSelect

/** How the caller proved who they are; decides CSRF, scopes and the Basic-only routes. */
type CredentialKind = 'token' | 'basic-password' | 'basic-token' | 'session' | 'oauth'

/** Token scope categories (docs/decisions.md §1); `read:X` is implied by `write:X`. */
export type ScopeCategory = 'user' | 'organization' | 'cluster' | 'admin'
export const TOKEN_SCOPES = [
  'all',
  'read:user',
  'write:user',
  'read:organization',
  'write:organization',
  'read:cluster',
  'write:cluster',
  'read:admin',
  'write:admin',
] as const

/** The signed-in caller a request acts as. */
export interface Actor {
  /** The effective user: the sudo target when an admin impersonates. */
  user: UserRow
  credential: CredentialKind
  /** Scopes of the token used; undefined for password and session sign-ins (unrestricted). */
  scopes: readonly string[] | undefined
  /** Set on session sign-ins: the session row id, for "current" flags and sign-out. */
  sessionId?: number
  /** Set on token sign-ins (bearer or Basic): the token's row id and name, never its value. */
  token?: { id: number; name: string }
  /** Set on sign-ins with a kubeconfig's token: the one cluster (its id) the token may be used on (docs/decisions.md §12). */
  clusterLimit?: number
  /** Set on OAuth2 access-token sign-ins: the application the user granted. */
  oauthApp?: { id: number; name: string }
  /** The admin behind a sudo request. */
  sudoBy?: UserRow
}

/** True when `scopes` allow `level` access to `category` (write implies read, `all` implies everything). */
export function scopesAllow(scopes: readonly string[] | undefined, level: 'read' | 'write', category: ScopeCategory): boolean {
  if (scopes === undefined || scopes.includes('all')) return true
  if (scopes.includes(`write:${category}`)) return true
  return level === 'read' && scopes.includes(`read:${category}`)
}

/** Why a token without `level` access to `category` is refused. */
export const missingScopeMessage = (level: 'read' | 'write', category: ScopeCategory) =>
  `token does not have at least one of required scope(s): [${level}:${category}]`

/** Throws forbidden when a token's scopes do not reach `level` on `category` (password and session sign-ins have no scopes to check). */
export function assertTokenScope(actor: Actor | undefined, level: 'read' | 'write', category: ScopeCategory): void {
  if (actor && !scopesAllow(actor.scopes, level, category)) throw new AppError('forbidden', missingScopeMessage(level, category))
}
