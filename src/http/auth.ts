import { parse as parseCookieHeader } from 'cookie'
import { Elysia } from 'elysia'
import type { Actor } from '../authz/actor'
import type { CredentialContext, PresentedCredential } from '../authz/credentials'
import type { Deps } from '../deps'
import type { MaybePromise } from '../maybe-promise'
import { clientAddress, type RequestIpSource } from './client-address'
import { pathOf } from './routable-url'

export const SESSION_COOKIE = 'platform_session'
export const CSRF_COOKIE = '_csrf'
const CSRF_HEADER = 'x-csrf-token'
/** The TOTP code on Basic password sign-ins of enrolled users (docs/decisions.md §1); Gitea's name is the alias. */
const OTP_HEADERS = ['x-platform-otp', 'x-gitea-otp'] as const
/** Paths whose Authorization header names an OAuth2 client, not a user: the endpoint checks it itself. */
const CLIENT_AUTHENTICATED_PATHS = new Set(['/login/oauth/access_token'])
/** Paths whose Authorization header is a cluster agent's token (docs/agents.md): the route checks it, and it is no user credential. */
const AGENT_AUTHENTICATED_PATH = /^\/api\/v1\/(?:agent\/connect|clustersv2\/[^/]+\/[^/]+\/agent\.yaml)$/
/**
 * Paths that start a new session: a session cookie sent there is not read. It may be one that has
 * ended (revoked, idle, password changed) and is HttpOnly, so the page cannot drop it; refusing it
 * would lock the browser out of signing in again. A planted cookie gains nothing either (T11).
 */
export const SESSION_STARTING_PATHS: ReadonlySet<string> = new Set([
  '/api/v1/user/signin',
  '/api/v1/user/signin/two-factor',
  '/api/v1/user/signin/webauthn/options',
  '/api/v1/user/signin/webauthn',
])

/**
 * The query parameters the platform reads off any request (below): a token and `sudo`. They are
 * the platform's, never the member cluster's: the proxy drops them from what it forwards.
 */
export const PLATFORM_QUERY_PARAMETERS: ReadonlySet<string> = new Set(['token', 'access_token', 'sudo'])

/** First match wins (docs/decisions.md §1): query token, Authorization token/bearer, Basic, session cookie. */
export function presentedCredential(
  request: Request,
  query: Pick<URLSearchParams, 'get'>,
  cookies: () => Record<string, string | undefined>,
): PresentedCredential {
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
  const session = cookies()[SESSION_COOKIE]
  if (session) return { kind: 'session', value: session }
  return { kind: 'none' }
}

/** The query of a URL without one, shared: most API calls have none. */
const NO_QUERY: Pick<URLSearchParams, 'get'> = new URLSearchParams()

/**
 * What the credential check may read off a request, each part read only when asked: most calls carry a token,
 * and no cookie to parse or CSRF header to read. Getters on a class, not an object literal's, so a request
 * allocates one small object.
 */
class RequestCredentialContext implements CredentialContext {
  #cookies: Record<string, string | undefined> | undefined
  constructor(
    private readonly request: Request,
    private readonly path: string,
    private readonly query: Pick<URLSearchParams, 'get'>,
    readonly address: () => string,
  ) {}
  /** The `cookie` package's parser: the first of repeated names wins, undecodable values stay as sent. */
  cookies = (): Record<string, string | undefined> =>
    (this.#cookies ??= SESSION_STARTING_PATHS.has(this.path) ? {} : parseCookieHeader(this.request.headers.get('cookie') ?? ''))
  get method() {
    return this.request.method
  }
  get csrfHeader() {
    return this.request.headers.get(CSRF_HEADER)
  }
  get csrfCookie() {
    return this.cookies()[CSRF_COOKIE]
  }
  get otp() {
    return this.request.headers.get(OTP_HEADERS[0]) ?? this.request.headers.get(OTP_HEADERS[1])
  }
  get sudo() {
    return this.query.get('sudo') ?? this.request.headers.get('sudo')
  }
}

/**
 * Reads the credential off `request` and hands it to identity's credential check (through Deps):
 * who the request acts as; a credential that is present but invalid is 401 everywhere.
 * `address` is asked only for password sign-ins (the limiter's key); it costs a syscall.
 */
export async function resolveActor(deps: Deps, request: Request, address: () => string = () => ''): Promise<Actor | undefined> {
  return actorNow(deps, request, address)
}

/** resolveActor's answer, at once when the credential check needs no waiting (a token signed in here since the last commit). */
function actorNow(deps: Deps, request: Request, address: () => string): MaybePromise<Actor | undefined> {
  const queryStart = request.url.indexOf('?')
  const path = pathOf(request.url)
  if (CLIENT_AUTHENTICATED_PATHS.has(path) || AGENT_AUTHENTICATED_PATH.test(path)) return undefined
  const query = queryStart < 0 ? NO_QUERY : new URLSearchParams(request.url.slice(queryStart + 1))
  const context = new RequestCredentialContext(request, path, query, address)
  return deps.checkCredential(presentedCredential(request, query, context.cookies), context)
}

const actorsOfRequests = new WeakMap<Request, Promise<Actor | undefined>>()

/**
 * The request's actor, resolved once however many hooks ask: the body reader asks first (an
 * anonymous body gets a smaller limit, a bad credential is refused before any body is read),
 * then `authenticate`. Throws unauthenticated for a credential that is present but invalid.
 */
export function actorOf(deps: Deps, request: Request, server: RequestIpSource): Promise<Actor | undefined> {
  let actor = actorsOfRequests.get(request)
  if (!actor) actorsOfRequests.set(request, (actor = resolveActor(deps, request, addressOf(deps, request, server))))
  return actor
}

/**
 * actorOf's answer for a lean route's request (http/lean-route.ts), which no hook asks about before or after: at
 * once when it needs no waiting, and not kept. Throws, or rejects, as actorOf does.
 */
export function leanActorOf(deps: Deps, request: Request, server: RequestIpSource): MaybePromise<Actor | undefined> {
  return actorNow(deps, request, addressOf(deps, request, server))
}

const addressOf = (deps: Deps, request: Request, server: RequestIpSource) => () =>
  clientAddress(server, request, deps.config.trustedProxies)

/** Adds `actor` (undefined for anonymous callers) to every request's context. */
export const authenticate = (deps: Deps) =>
  // derive, not resolve: it runs before body validation, so a bad credential is 401 before any 422.
  new Elysia({ name: 'authenticate' }).derive({ as: 'global' }, async ({ request, server }) => ({
    actor: await actorOf(deps, request, server),
  }))
