import { Elysia } from 'elysia'
import type { Actor } from '../authz/actor'
import { findAccountByName, findUserByEmail, findUserByName, USER_TYPE, type UserRow } from '../identity/store'
import { assertPasswordSignInAllowed } from '../identity/signin/service'
import { checkSecondFactor } from '../identity/security/two-factor/service'
import { authenticateOAuthAccessToken, OAUTH_ACCESS_PREFIX } from '../identity/oauth2/authorization'
import { authenticateSession } from '../identity/sessions/service'
import { authenticateToken, scopesOf } from '../identity/tokens/service'
import { looksLikeAccessToken, sameDigest, sha256Hex } from '../identity/tokens/secrets'
import { checkPasswordAttempt } from '../identity/sign-in-limiter'
import { clientAddress, type RequestIpSource } from './client-address'
import type { Deps } from '../deps'
import { AppError } from '../errors'

export const SESSION_COOKIE = 'platform_session'
export const CSRF_COOKIE = '_csrf'
export const CSRF_HEADER = 'x-csrf-token'
/** The TOTP code on Basic password sign-ins of enrolled users (decisions §1); Gitea's name is the alias. */
export const OTP_HEADERS = ['x-platform-otp', 'x-gitea-otp'] as const
export const Messages = {
  invalidToken: 'invalid or expired access token',
  invalidBasic: 'invalid username, password or token',
  invalidSession: 'the session has ended, sign in again',
  csrf: 'missing or wrong X-Csrf-Token header for a cookie-authenticated request',
  sudoNotAdmin: 'Only administrators allowed to sudo.',
  sudoUnknown: 'sudo target user does not exist',
} as const

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Paths whose Authorization header names an OAuth2 client, not a user: the endpoint checks it itself. */
const CLIENT_AUTHENTICATED_PATHS = new Set(['/login/oauth/access_token'])
/**
 * Paths that start a new session: a session cookie sent there is not read. It may be one that has
 * ended (revoked, idle, password changed) and is HttpOnly, so the page cannot drop it; refusing it
 * would lock the browser out of signing in again. A planted cookie gains nothing either (T11).
 */
export const SESSION_STARTING_PATHS: ReadonlySet<string> = new Set(['/api/v1/user/signin', '/api/v1/user/signin/two-factor', '/api/v1/user/signin/webauthn/options', '/api/v1/user/signin/webauthn'])

/** The request's credential as sent, before it is checked. */
type Presented =
  | { kind: 'bearer'; value: string }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'session'; value: string }
  | { kind: 'none' }

/** First match wins (decisions §1): query token, Authorization token/bearer, Basic, session cookie. */
export function presentedCredential(request: Request, query: Pick<URLSearchParams, 'get'>, cookies: Record<string, string>): Presented {
  const queryToken = query.get('token') || query.get('access_token')
  if (queryToken) return { kind: 'bearer', value: queryToken }
  const header = request.headers.get('authorization')
  if (header) {
    const space = header.indexOf(' ')
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
    const value = space < 0 ? '' : header.slice(space + 1).trim()
    if (scheme === 'token' || scheme === 'bearer') return { kind: 'bearer', value }
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      return colon < 0
        ? { kind: 'basic', username: decoded, password: '' }
        : { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
    }
    return { kind: 'bearer', value: '' }
  }
  const session = cookies[SESSION_COOKIE]
  if (session) return { kind: 'session', value: session }
  return { kind: 'none' }
}

/** Parses the Cookie header; malformed pairs are skipped. */
export function parseCookies(header: string | null): Record<string, string> {
  const cookies: Record<string, string> = {}
  if (!header) return cookies
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=')
    if (eq < 0) continue
    const name = pair.slice(0, eq).trim()
    if (!name || name in cookies) continue
    try { cookies[name] = decodeURIComponent(pair.slice(eq + 1).trim()) } catch { cookies[name] = pair.slice(eq + 1).trim() }
  }
  return cookies
}

async function signInWithBearer(deps: Deps, value: string): Promise<Actor> {
  if (value.startsWith(OAUTH_ACCESS_PREFIX)) {
    const granted = await authenticateOAuthAccessToken(deps.db, value)
    if (!granted) throw new AppError('unauthenticated', Messages.invalidToken)
    return { user: granted.user, credential: 'oauth', scopes: granted.scopes }
  }
  const found = value ? await authenticateToken(deps.db, value) : undefined
  if (!found) throw new AppError('unauthenticated', Messages.invalidToken)
  return { user: found.user, credential: 'token', scopes: scopesOf(found.token), tokenId: found.token.id }
}

/**
 * Basic: a token as username with an empty password, a token as password (of that user), or the
 * user's real password. Only the last counts as a password sign-in for the Basic-only routes, and
 * only it needs the second factor (`otp`) from users enrolled in TOTP.
 */
async function signInWithBasic(deps: Deps, username: string, password: string, otp: string | null, address: string): Promise<Actor> {
  if (password === '' && looksLikeAccessToken(username)) {
    const found = await authenticateToken(deps.db, username)
    if (found) return { user: found.user, credential: 'basic-token', scopes: scopesOf(found.token), tokenId: found.token.id }
    throw new AppError('unauthenticated', Messages.invalidBasic)
  }
  const user = username.includes('@') ? await findUserByEmail(deps.db.read, username) : await findUserByName(deps.db.read, username)
  if (user && looksLikeAccessToken(password)) {
    const found = await authenticateToken(deps.db, password)
    if (found && found.user.id === user.id)
      return { user, credential: 'basic-token', scopes: scopesOf(found.token), tokenId: found.token.id }
  }
  // A right password gives its slot back; the second factor counts its own failures.
  const ok = await checkPasswordAttempt(deps, user, username, password, address)
  if (!user || !ok) throw new AppError('unauthenticated', Messages.invalidBasic)
  if (!user.isActive || user.prohibitLogin) throw new AppError('unauthenticated', Messages.invalidBasic)
  await checkSecondFactor(deps, user.id, otp)
  await assertPasswordSignInAllowed(deps, user)
  return { user, credential: 'basic-password', scopes: undefined }
}

async function signInWithSession(deps: Deps, request: Request, secret: string, cookies: Record<string, string>): Promise<Actor> {
  const found = await authenticateSession(deps.db, secret)
  // The 401 also expires the dead cookie: it is HttpOnly, so the page could not drop it itself
  // and would otherwise get 401 on every call, public ones included, until it expired.
  if (!found) throw new AppError('unauthenticated', Messages.invalidSession, [], { 'set-cookie': expiredSessionCookie(deps) })
  if (!SAFE_METHODS.has(request.method)) {
    const header = request.headers.get(CSRF_HEADER) ?? ''
    // Compared as digests: constant time, and any header text (even non-ASCII) has a comparable length.
    const sent = sha256Hex(header)
    if (header === '' || !sameDigest(sent, sha256Hex(cookies[CSRF_COOKIE] ?? '')) || !sameDigest(sent, sha256Hex(found.session.csrfToken)))
      throw new AppError('forbidden', Messages.csrf)
  }
  return { user: found.user, credential: 'session', scopes: undefined, sessionId: found.session.id }
}

function expiredSessionCookie(deps: Deps): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax${deps.config.publicUrl.startsWith('https:') ? '; Secure' : ''}`
}

async function applySudo(deps: Deps, actor: Actor | undefined, target: string): Promise<Actor> {
  if (!actor || !actor.user.isAdmin) throw new AppError('forbidden', Messages.sudoNotAdmin)
  const user: UserRow | undefined = await findAccountByName(deps.db.read, target)
  if (!user || user.type !== USER_TYPE.individual) throw new AppError('notFound', Messages.sudoUnknown)
  return { ...actor, user, sudoBy: actor.user }
}

/** The query of a URL without one, shared: most API calls have none. */
const NO_QUERY: Pick<URLSearchParams, 'get'> = new URLSearchParams()

/**
 * Resolves who the request acts as; a credential that is present but invalid is 401 everywhere.
 * `address` is asked only for password sign-ins (the limiter's key); it costs a syscall.
 */
export async function resolveActor(deps: Deps, request: Request, address: () => string = () => ''): Promise<Actor | undefined> {
  const queryStart = request.url.indexOf('?')
  const pathStart = request.url.indexOf('/', request.url.indexOf('//') + 2)
  const path = request.url.slice(pathStart, queryStart < 0 ? undefined : queryStart)
  if (CLIENT_AUTHENTICATED_PATHS.has(path)) return undefined
  const query = queryStart < 0 ? NO_QUERY : new URLSearchParams(request.url.slice(queryStart + 1))
  const cookies = SESSION_STARTING_PATHS.has(path) ? {} : parseCookies(request.headers.get('cookie'))
  const presented = presentedCredential(request, query, cookies)
  let actor: Actor | undefined
  if (presented.kind === 'bearer') actor = await signInWithBearer(deps, presented.value)
  else if (presented.kind === 'basic') actor = await signInWithBasic(deps, presented.username, presented.password,
    request.headers.get(OTP_HEADERS[0]) ?? request.headers.get(OTP_HEADERS[1]), address())
  else if (presented.kind === 'session') actor = await signInWithSession(deps, request, presented.value, cookies)
  const sudo = query.get('sudo') ?? request.headers.get('sudo')
  return sudo ? applySudo(deps, actor, sudo) : actor
}

const actorsOfRequests = new WeakMap<Request, Promise<Actor | undefined>>()

/**
 * The request's actor, resolved once however many hooks ask: the body reader asks first (an
 * anonymous body gets a smaller limit, a bad credential is refused before any body is read),
 * then `authenticate`. Throws unauthenticated for a credential that is present but invalid.
 */
export function actorOf(deps: Deps, request: Request, server: RequestIpSource): Promise<Actor | undefined> {
  let actor = actorsOfRequests.get(request)
  if (!actor) actorsOfRequests.set(request, (actor = resolveActor(deps, request, () => clientAddress(server, request, deps.config.trustedProxies))))
  return actor
}

/** Adds `actor` (undefined for anonymous callers) to every request's context. */
export const authenticate = (deps: Deps) =>
  // derive, not resolve: it runs before body validation, so a bad credential is 401 before any 422.
  new Elysia({ name: 'authenticate' }).derive({ as: 'global' }, async ({ request, server }) => ({
    actor: await actorOf(deps, request, server),
  }))
