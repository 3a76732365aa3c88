import { type Actor, TOKEN_SCOPES } from '../../authz/actor'
import { nowSeconds } from '../../clock'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import type { Database } from '../../storage/database'
import { findUserById, type UserRow } from '../store'
import { sameDigest, sha256Hex } from '../tokens/secrets'
import { randomSecret, redirectUrisOf } from './service'
import * as store from './store'

export const Messages = {
  unknownClient: 'unknown OAuth2 client_id',
  redirectMismatch: "redirect_uri is not one of the application's registered redirect URIs",
  interactiveOnly: 'granting access to an application needs a browser session or your password, not a token',
} as const

/** Access tokens issued by the flow start with this, so the auth layer knows where to look them up. */
export const OAUTH_ACCESS_PREFIX = 'poa_'
const REFRESH_PREFIX = 'por_'
const CODE_PREFIX = 'poc_'
export const CODE_TTL_SECONDS = 10 * 60
const ACCESS_TTL_SECONDS = 60 * 60
const REFRESH_TTL_SECONDS = 30 * 24 * 3600

/** An RFC 6749 §5.2 error of the token endpoint, rendered as `{error, error_description}`. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description)
  }
}

/** The query of `/login/oauth/authorize`, echoed to the grant step. */
export interface AuthorizationRequest {
  response_type: string
  client_id: string
  redirect_uri: string
  state?: string
  scope?: string
  code_challenge?: string
  code_challenge_method?: string
}

type Checked = { ok: true; app: store.ApplicationRow; scopes: string[]; challenge: string } | { ok: false; redirect: string }

/** `uri` with `params` added to its query (RFC 6749 §4.1.2: existing query kept). */
function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}

/** Space- (or comma-) separated scopes from the token vocabulary; none asked means `all`, as for access tokens. */
export function parseScopes(text: string | undefined): string[] | undefined {
  const scopes = [...new Set((text ?? '').split(/[\s,]+/).filter(Boolean))]
  if (scopes.some((s) => !(TOKEN_SCOPES as readonly string[]).includes(s))) return undefined
  return scopes.length === 0 ? ['all'] : scopes
}

/**
 * Checks an authorization request. An unknown client or a redirect URI not registered exactly is
 * shown to the user (badRequest): redirecting there would hand the answer to a stranger. Other
 * faults go back to the client as an error redirect.
 */
async function checkRequest(deps: Deps, actor: Actor, req: AuthorizationRequest): Promise<Checked> {
  const app = await store.findApplicationByClientId(deps.db.read, req.client_id)
  if (!app) throw new AppError('badRequest', Messages.unknownClient)
  if (!redirectUrisOf(app).includes(req.redirect_uri)) throw new AppError('badRequest', Messages.redirectMismatch)
  if (actor.credential !== 'session' && actor.credential !== 'basic-password') throw new AppError('forbidden', Messages.interactiveOnly)
  const fail = (error: string, description: string): Checked => ({
    ok: false,
    redirect: redirectWith(req.redirect_uri, { error, error_description: description, state: req.state }),
  })
  if (req.response_type !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported')
  const challenge = req.code_challenge ?? ''
  if (challenge === '' && !app.confidentialClient) return fail('invalid_request', 'public clients must use PKCE (code_challenge with S256)')
  if (challenge !== '' && req.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256')
  if (challenge !== '' && !/^[A-Za-z0-9_-]{43}$/.test(challenge))
    return fail('invalid_request', 'code_challenge must be a base64url SHA-256 digest')
  const scopes = parseScopes(req.scope)
  if (!scopes) return fail('invalid_scope', `scopes must be among: ${TOKEN_SCOPES.join(' ')}`)
  return { ok: true, app, scopes, challenge }
}

/** What the user is asked to approve, or the error redirect for a faulty request. Throws badRequest or forbidden. */
export async function describeAuthorization(deps: Deps, actor: Actor, req: AuthorizationRequest) {
  const checked = await checkRequest(deps, actor, req)
  if (!checked.ok) return { redirect: checked.redirect }
  return {
    consent: {
      application: checked.app.name,
      client_id: checked.app.clientId,
      redirect_uri: req.redirect_uri,
      scopes: checked.scopes,
      state: req.state ?? '',
    },
  }
}

/**
 * The user's answer: approved → a single-use code (hashed, CODE_TTL_SECONDS) in the redirect;
 * refused → `access_denied`. Returns the redirect URL. Throws badRequest or forbidden.
 */
export async function grantAuthorization(deps: Deps, actor: Actor, req: AuthorizationRequest, granted: boolean): Promise<string> {
  const checked = await checkRequest(deps, actor, req)
  if (!checked.ok) return checked.redirect
  if (!granted) return redirectWith(req.redirect_uri, { error: 'access_denied', error_description: 'the user refused', state: req.state })
  const code = randomSecret(CODE_PREFIX)
  const now = nowSeconds(deps.clock)
  await deps.db.write((tx) =>
    store.insertCode(
      tx,
      {
        applicationId: checked.app.id,
        uid: actor.user.id,
        codeHash: sha256Hex(code),
        redirectUri: req.redirect_uri,
        scopes: checked.scopes.join(','),
        codeChallenge: checked.challenge,
        expiresAt: now + CODE_TTL_SECONDS,
      },
      now,
    ),
  )
  return redirectWith(req.redirect_uri, { code, state: req.state })
}

/** The client behind a token request: HTTP Basic (RFC 6749 §2.3.1, form-encoded parts) or body parameters. */
export async function authenticateClient(
  deps: Deps,
  form: Record<string, string | undefined>,
  authorization: string | null,
): Promise<store.ApplicationRow> {
  let clientId = form.client_id
  let secret = form.client_secret
  if (authorization && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const formDecode = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '))
      } catch {
        return s
      }
    }
    const basicId = formDecode(colon < 0 ? decoded : decoded.slice(0, colon))
    if (clientId !== undefined && clientId !== basicId) throw new OAuthError('invalid_request', 'client_id in the body and in Basic differ')
    clientId = basicId
    secret = colon < 0 ? '' : formDecode(decoded.slice(colon + 1))
  }
  const invalid = () => new OAuthError('invalid_client', 'client authentication failed', 401)
  if (!clientId) throw invalid()
  const app = await store.findApplicationByClientId(deps.db.read, clientId)
  if (!app) throw invalid()
  const secretOk = secret ? sameDigest(sha256Hex(secret), app.clientSecretHash) : false
  if (app.confidentialClient ? !secretOk : secret && !secretOk) throw invalid()
  return app
}

/** A token answer; a `platform-cli` sign-in's access token is an access token of the user, which neither expires nor refreshes. */
export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in?: number
  refresh_token?: string
  scope: string
}

export function newTokens(scopes: string[], now: number) {
  const access = randomSecret(OAUTH_ACCESS_PREFIX)
  const refresh = randomSecret(REFRESH_PREFIX)
  return {
    response: {
      access_token: access,
      token_type: 'bearer' as const,
      expires_in: ACCESS_TTL_SECONDS,
      refresh_token: refresh,
      scope: scopes.join(' '),
    },
    row: {
      scopes: scopes.join(','),
      accessHash: sha256Hex(access),
      accessExpiresAt: now + ACCESS_TTL_SECONDS,
      refreshHash: sha256Hex(refresh),
      refreshExpiresAt: now + REFRESH_TTL_SECONDS,
    },
  }
}

const pkceDigest = (verifier: string) => new Bun.CryptoHasher('sha256').update(verifier).digest('base64url')

/**
 * The token endpoint: `authorization_code` (single-use code, exact redirect URI, PKCE S256 when a
 * challenge was sent; a replayed code also revokes what it issued) and `refresh_token` (rotated on
 * use; the replaced token presented again revokes the grant). Throws OAuthError.
 */
export async function exchangeToken(
  deps: Deps,
  form: Record<string, string | undefined>,
  authorization: string | null,
): Promise<TokenResponse> {
  const app = await authenticateClient(deps, form, authorization)
  if (form.grant_type === 'authorization_code') return redeemCode(deps, app, form)
  if (form.grant_type === 'refresh_token') return refresh(deps, app, form)
  throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token')
}

async function redeemCode(deps: Deps, app: store.ApplicationRow, form: Record<string, string | undefined>): Promise<TokenResponse> {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = form
  if (!code || !redirectUri) throw new OAuthError('invalid_request', 'code and redirect_uri are required')
  const now = nowSeconds(deps.clock)
  const outcome = await deps.db.write(async (tx): Promise<{ error: string } | { tokens: TokenResponse }> => {
    const row = await store.findCodeByHash(tx, sha256Hex(code))
    if (!row || row.applicationId !== app.id) return { error: 'the code is unknown or belongs to another client' }
    if (row.usedAt !== null) {
      await store.deleteGrantsOfCode(tx, row.id)
      return { error: 'the code was already used; what it issued is revoked' }
    }
    if (row.expiresAt <= now) return { error: 'the code expired' }
    if (row.redirectUri !== redirectUri) return { error: 'redirect_uri differs from the authorization request' }
    // The application may have changed since the code was issued: its rules now are the ones that count.
    if (!redirectUrisOf(app).includes(row.redirectUri)) return { error: 'the redirect URI is no longer registered' }
    if (row.codeChallenge === '' && !app.confidentialClient) return { error: 'public clients must use PKCE' }
    if (row.codeChallenge !== '' && (!verifier || !sameDigest(pkceDigest(verifier), row.codeChallenge)))
      return { error: 'code_verifier does not match the code_challenge' }
    await store.markCodeUsed(tx, row.id, now)
    const tokens = newTokens(row.scopes.split(','), now)
    await store.insertGrant(tx, { applicationId: app.id, uid: row.uid, codeId: row.id, ...tokens.row }, now)
    return { tokens: tokens.response }
  })
  if ('error' in outcome) throw new OAuthError('invalid_grant', outcome.error)
  return outcome.tokens
}

async function refresh(deps: Deps, app: store.ApplicationRow, form: Record<string, string | undefined>): Promise<TokenResponse> {
  if (!form.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required')
  const refreshHash = sha256Hex(form.refresh_token)
  const now = nowSeconds(deps.clock)
  const outcome = await deps.db.write(async (tx): Promise<{ error: string } | { scopeError: true } | { tokens: TokenResponse }> => {
    const grant = await store.findGrantByRefreshHash(tx, refreshHash)
    const replaced = grant ? undefined : await store.findGrantByPreviousRefreshHash(tx, refreshHash)
    if (replaced) {
      await store.deleteGrant(tx, replaced.id)
      return { error: 'the refresh token was already used; the grant is revoked' }
    }
    if (!grant || grant.applicationId !== app.id || grant.refreshExpiresAt <= now)
      return { error: 'the refresh token is unknown, expired or already used' }
    const granted = grant.scopes.split(',')
    const asked = form.scope === undefined ? granted : parseScopes(form.scope)
    if (!asked || asked.some((s) => !granted.includes(s))) return { scopeError: true }
    const tokens = newTokens(asked, now)
    if (!(await store.rotateGrant(tx, grant, tokens.row))) return { error: 'the refresh token was already used' }
    return { tokens: tokens.response }
  })
  if ('scopeError' in outcome) throw new OAuthError('invalid_scope', 'a refresh may only keep or narrow the granted scopes')
  if ('error' in outcome) throw new OAuthError('invalid_grant', outcome.error)
  return outcome.tokens
}

/**
 * The user, scopes and application behind a live access token from the flow at `now` (epoch
 * seconds); undefined when unknown, expired or the user may not sign in.
 */
export async function authenticateOAuthAccessToken(
  db: Database,
  token: string,
  now: number,
): Promise<{ user: UserRow; scopes: string[]; application: { id: number; name: string } } | undefined> {
  if (!token.startsWith(OAUTH_ACCESS_PREFIX) || token.length > 256) return undefined
  const grant = await store.findGrantByAccessHash(db.read, sha256Hex(token))
  if (!grant || grant.accessExpiresAt <= now) return undefined
  const user = await findUserById(db.read, grant.uid)
  if (!user?.isActive || user.prohibitLogin) return undefined
  return { user, scopes: grant.scopes.split(','), application: { id: grant.applicationId, name: grant.applicationName } }
}
