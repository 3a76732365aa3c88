import { USER_TYPE } from '../../db/schema/codes'
import type { Actor } from '../authz/actor'
import type { CredentialContext, PresentedCredential } from '../authz/credentials'
import { nowSeconds } from '../clock'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { SESSION_COOKIE } from '../http/auth'
import type { MaybePromise } from '../maybe-promise'
import { checkPasswordAttempt } from './limiter/service'
import { authenticateOAuthAccessToken, OAUTH_ACCESS_PREFIX } from './oauth2/authorization'
import { checkSecondFactor } from './security/two-factor/service'
import { authenticateSession } from './sessions/service'
import { assertPasswordSignInAllowed } from './signin/service'
import { findAccountByName, findUserByEmail, findUserByName, type UserRow } from './store'
import { looksLikeAccessToken, sameDigest, sha256Hex } from './tokens/secrets'
import { authenticateToken, knownTokenSignIn, scopesOf, type TokenSignIn } from './tokens/service'

export const Messages = {
  invalidToken: 'invalid or expired access token',
  invalidBasic: 'invalid username, password or token',
  invalidSession: 'the session has ended, sign in again',
  csrf: 'missing or wrong X-Csrf-Token header for a cookie-authenticated request',
  sudoNotAdmin: 'Only administrators allowed to sudo.',
  sudoUnknown: 'sudo target user does not exist',
} as const

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The caller a token signs in: its user, scopes and row, and the one cluster a kubeconfig's token is limited to. */
const tokenActor = (found: TokenSignIn, credential: 'token' | 'basic-token', user = found.user): Actor => ({
  user,
  credential,
  scopes: scopesOf(found.token),
  token: { id: found.token.id, name: found.token.name },
  ...(found.token.kubeconfigClusterId === null ? {} : { clusterLimit: found.token.kubeconfigClusterId }),
})

async function signInWithBearer(deps: Deps, value: string): Promise<Actor> {
  if (value.startsWith(OAUTH_ACCESS_PREFIX)) {
    const granted = await authenticateOAuthAccessToken(deps.db, value, nowSeconds(deps.clock))
    if (!granted) throw new AppError('unauthenticated', Messages.invalidToken)
    return { user: granted.user, credential: 'oauth', scopes: granted.scopes, oauthApp: granted.application }
  }
  const found = value ? await authenticateToken(deps.db, value, nowSeconds(deps.clock)) : undefined
  if (!found) throw new AppError('unauthenticated', Messages.invalidToken)
  return tokenActor(found, 'token')
}

/**
 * Basic: a token as username with an empty password, a token as password (of that user), or the
 * user's real password. Only the last counts as a password sign-in for the Basic-only routes, and
 * only it needs the second factor (`otp`) from users enrolled in TOTP.
 */
async function signInWithBasic(deps: Deps, username: string, password: string, otp: string | null, address: string): Promise<Actor> {
  if (password === '' && looksLikeAccessToken(username)) {
    const found = await authenticateToken(deps.db, username, nowSeconds(deps.clock))
    if (found) return tokenActor(found, 'basic-token')
    throw new AppError('unauthenticated', Messages.invalidBasic)
  }
  const user = username.includes('@') ? await findUserByEmail(deps.db.read, username) : await findUserByName(deps.db.read, username)
  if (user && looksLikeAccessToken(password)) {
    const found = await authenticateToken(deps.db, password, nowSeconds(deps.clock))
    if (found && found.user.id === user.id) return tokenActor(found, 'basic-token', user)
  }
  // A right password gives its slot back; the second factor counts its own failures.
  const ok = await checkPasswordAttempt(deps, user, username, password, address)
  if (!user || !ok) throw new AppError('unauthenticated', Messages.invalidBasic)
  if (!user.isActive || user.prohibitLogin) throw new AppError('unauthenticated', Messages.invalidBasic)
  await checkSecondFactor(deps, user.id, otp)
  await assertPasswordSignInAllowed(deps, user)
  return { user, credential: 'basic-password', scopes: undefined }
}

async function signInWithSession(deps: Deps, secret: string, context: CredentialContext): Promise<Actor> {
  const found = await authenticateSession(deps.db, secret, nowSeconds(deps.clock))
  // The 401 also expires the dead cookie: it is HttpOnly, so the page could not drop it itself
  // and would otherwise get 401 on every call, public ones included, until it expired.
  if (!found) throw new AppError('unauthenticated', Messages.invalidSession, [], { 'set-cookie': expiredSessionCookie(deps) })
  if (!SAFE_METHODS.has(context.method)) {
    const header = context.csrfHeader ?? ''
    // Compared as digests: constant time, and any header text (even non-ASCII) has a comparable length.
    const sent = sha256Hex(header)
    if (header === '' || !sameDigest(sent, sha256Hex(context.csrfCookie ?? '')) || !sameDigest(sent, sha256Hex(found.session.csrfToken)))
      throw new AppError('forbidden', Messages.csrf)
  }
  return { user: found.user, credential: 'session', scopes: undefined, sessionId: found.session.id }
}

function expiredSessionCookie(deps: Deps): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax${deps.config.publicUrl.startsWith('https:') ? '; Secure' : ''}`
}

async function applySudo(deps: Deps, actor: Actor | undefined, target: string): Promise<Actor> {
  if (!actor?.user.isAdmin) throw new AppError('forbidden', Messages.sudoNotAdmin)
  const user: UserRow | undefined = await findAccountByName(deps.db.read, target)
  if (!user || user.type !== USER_TYPE.individual) throw new AppError('notFound', Messages.sudoUnknown)
  return { ...actor, user, sudoBy: actor.user }
}

/**
 * Checks the credential a request presented (token, Basic, session cookie, then sudo) and answers
 * who it acts as; undefined for anonymous callers. Throws unauthenticated for a credential that is
 * present but invalid, forbidden (CSRF, sudo by a non-admin), notFound (unknown sudo target).
 */
export function checkCredential(deps: Deps, presented: PresentedCredential, context: CredentialContext): MaybePromise<Actor | undefined> {
  // Most API calls: a token this process signed in since the last commit, without sudo, decided at once.
  const known = presented.kind === 'bearer' && !context.sudo ? knownBearer(deps, presented.value) : undefined
  return known ?? verifyCredential(deps, presented, context)
}

/** The actor of each cached token sign-in, built once (it is rebuilt with the sign-in after any commit). */
const knownBearerActors = new WeakMap<TokenSignIn, Actor>()

function knownBearer(deps: Deps, value: string): Actor | undefined {
  const found = value.startsWith(OAUTH_ACCESS_PREFIX) ? undefined : knownTokenSignIn(deps.db, value, nowSeconds(deps.clock))
  if (!found) return undefined
  let actor = knownBearerActors.get(found)
  if (!actor) knownBearerActors.set(found, (actor = Object.freeze(tokenActor(found, 'token'))))
  return actor
}

async function verifyCredential(deps: Deps, presented: PresentedCredential, context: CredentialContext): Promise<Actor | undefined> {
  let actor: Actor | undefined
  if (presented.kind === 'bearer') actor = await signInWithBearer(deps, presented.value)
  else if (presented.kind === 'basic')
    actor = await signInWithBasic(deps, presented.username, presented.password, context.otp, context.address())
  else if (presented.kind === 'session') actor = await signInWithSession(deps, presented.value, context)
  return context.sudo ? applySudo(deps, actor, context.sudo) : actor
}
