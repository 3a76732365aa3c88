import * as oauth from 'oauth4webapi'
import { AppError } from '../../errors'
import { type EgressPolicy, EgressRefused, egressFetch } from '../../net/egress'

/**
 * The one module that talks to OpenID providers, through oauth4webapi: discovery, the
 * authorization URL (code + PKCE S256 + state + nonce) and the code exchange with the ID token
 * checked (issuer, audience, nonce, expiry, and its signature against the provider's JWKS). Every
 * request goes through the egress guard; plain http is allowed only where private endpoints are.
 */
export interface OidcClient {
  discoveryUrl: string
  clientId: string
  clientSecret: string
}

const OidcMessages = {
  unreachable: (host: string) => `the identity provider at ${host} could not be reached`,
  notOidc: (url: string) => `${url} is not a valid OpenID configuration`,
  httpsOnly: 'the discovery URL must be https (http is allowed only with PLATFORM_ALLOW_PRIVATE_ENDPOINTS=true)',
  refused: (reason: string) => `the identity provider refused the sign-in: ${reason}`,
  badIdToken: (reason: string) => `the identity provider's ID token is not valid: ${reason}`,
} as const

const WELL_KNOWN = '/.well-known/openid-configuration'

/** The issuer a discovery URL names: the URL itself, or the URL without the well-known suffix. */
function issuerOf(discoveryUrl: string): URL {
  const url = new URL(discoveryUrl)
  if (url.pathname.endsWith(WELL_KNOWN)) url.pathname = url.pathname.slice(0, -WELL_KNOWN.length) || '/'
  url.search = ''
  url.hash = ''
  return url
}

function requestOptions(policy: EgressPolicy, url: URL) {
  if (url.protocol === 'http:' && !policy.allowPrivate)
    throw new AppError('invalid', OidcMessages.httpsOnly, [{ field: 'discoveryURL', message: 'must be https' }])
  const fetchThroughGuard = ((input: string | URL | Request, init?: RequestInit) =>
    egressFetch(
      input instanceof Request ? input.url : input,
      { ...init, signal: init?.signal ?? AbortSignal.timeout(10_000) } as RequestInit,
      policy,
    )) as typeof fetch
  return { [oauth.customFetch]: fetchThroughGuard, [oauth.allowInsecureRequests]: policy.allowPrivate }
}

/** Fetches and checks the provider's OpenID configuration. Throws invalid (not OIDC, refused address) or upstream (unreachable). */
export async function discover(discoveryUrl: string, policy: EgressPolicy): Promise<oauth.AuthorizationServer> {
  let issuer: URL
  try {
    issuer = issuerOf(discoveryUrl)
  } catch {
    throw new AppError('invalid', OidcMessages.notOidc(discoveryUrl), [{ field: 'discoveryURL', message: 'must be a URL' }])
  }
  const response = await guarded(issuer, () => oauth.discoveryRequest(issuer, { ...requestOptions(policy, issuer), algorithm: 'oidc' }))
  try {
    const server = await oauth.processDiscoveryResponse(issuer, response)
    if (!server.authorization_endpoint || !server.token_endpoint || !server.jwks_uri) throw new Error('incomplete')
    return server
  } catch {
    throw new AppError('invalid', OidcMessages.notOidc(discoveryUrl), [
      { field: 'discoveryURL', message: 'is not an OpenID configuration' },
    ])
  }
}

async function guarded<T>(target: URL, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof AppError) throw error
    if (error instanceof EgressRefused)
      throw new AppError('invalid', `discoveryURL is not allowed: ${error.message}`, [{ field: 'discoveryURL', message: error.message }])
    throw new AppError('upstream', OidcMessages.unreachable(target.host))
  }
}

export interface AuthorizationRequest {
  url: string
  state: string
  nonce: string
  codeVerifier: string
}

/** The provider's authorization URL with fresh state, nonce and PKCE verifier (kept by the caller). */
export async function authorizationRequest(
  server: oauth.AuthorizationServer,
  client: OidcClient,
  redirectUri: string,
): Promise<AuthorizationRequest> {
  const state = oauth.generateRandomState()
  const nonce = oauth.generateRandomNonce()
  const codeVerifier = oauth.generateRandomCodeVerifier()
  const url = new URL(server.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  }).toString()
  return { url: url.href, state, nonce, codeVerifier }
}

export interface VerifiedIdentity {
  issuer: string
  subject: string
  email?: string
  emailVerified: boolean
  preferredUsername?: string
  name?: string
}

/**
 * Checks the callback's parameters against the expected state, redeems the code with the PKCE
 * verifier and verifies the ID token. Throws badRequest (the provider's error, a bad state or
 * token), upstream (unreachable).
 */
export async function redeemCode(
  server: oauth.AuthorizationServer,
  client: OidcClient,
  callback: URLSearchParams,
  expected: { state: string; nonce: string; codeVerifier: string; redirectUri: string },
  policy: EgressPolicy,
): Promise<VerifiedIdentity> {
  const oauthClient: oauth.Client = { client_id: client.clientId }
  const auth = oauth.ClientSecretPost(client.clientSecret)
  const options = requestOptions(policy, new URL(server.issuer))
  let params: URLSearchParams
  try {
    params = oauth.validateAuthResponse(server, oauthClient, callback, expected.state)
  } catch (error) {
    throw new AppError(
      'badRequest',
      OidcMessages.refused(error instanceof oauth.AuthorizationResponseError ? providerError(error) : reasonOf(error)),
    )
  }
  const response = await guarded(new URL(server.token_endpoint!), () =>
    oauth.authorizationCodeGrantRequest(server, oauthClient, auth, params, expected.redirectUri, expected.codeVerifier, options),
  )
  let claims: oauth.IDToken
  try {
    const result = await oauth.processAuthorizationCodeResponse(server, oauthClient, response, {
      expectedNonce: expected.nonce,
      requireIdToken: true,
    })
    claims = oauth.getValidatedIdTokenClaims(result)!
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) throw new AppError('badRequest', OidcMessages.refused(providerError(error)))
    throw new AppError('badRequest', OidcMessages.badIdToken(reasonOf(error)))
  }
  try {
    await oauth.validateApplicationLevelSignature(server, response, options)
  } catch (error) {
    throw new AppError('badRequest', OidcMessages.badIdToken(`signature: ${reasonOf(error)}`))
  }
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    emailVerified: claims.email_verified === true,
    preferredUsername: typeof claims.preferred_username === 'string' ? claims.preferred_username : undefined,
    name: typeof claims.name === 'string' ? claims.name : undefined,
  }
}

/** The provider's OAuth error code and description (RFC 6749 §4.1.2.1, §5.2), bounded. */
const providerError = (error: { error: string; error_description?: string | undefined }) =>
  `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`.slice(0, 300)

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : 'unknown error').slice(0, 200)
