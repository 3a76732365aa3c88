import type { Actor } from '../../authz/actor'
import { nowSeconds } from '../../clock'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { sha256Hex } from '../tokens/secrets'
import { mintToken } from '../tokens/service'
import { authenticateClient, Messages, newTokens, OAuthError, parseScopes, type TokenResponse } from './authorization'
import { randomSecret } from './service'
import * as store from './store'

/** The device authorization grant (RFC 8628 §3.4). */
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'
/** The built-in client of `platform-api login`: no registered application, its tokens are the user's access tokens. */
const CLI_CLIENT_ID = 'platform-cli'
const CLI_CLIENT_NAME = 'platform-api command line'
const DEVICE_CODE_PREFIX = 'pod_'
const DEVICE_TTL_SECONDS = 10 * 60
const POLL_INTERVAL_SECONDS = 5
/** What `slow_down` adds to the interval (RFC 8628 §3.5). */
const SLOW_DOWN_SECONDS = 5
/**
 * A poll this share of the interval after the last one is not too fast: clients wait the interval
 * by a clock of their own, and a VM's runs fast (docs/decisions.md §12).
 */
const POLL_TOLERANCE = 0.8
/** RFC 8628 §6.1: base-20 consonants, 8 of them (about 34.5 bits), shown as `WDJB-MJHT`. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'

const DeviceMessages = {
  badUserCode: 'the code is 8 letters as the terminal shows it, e.g. WDJB-MJHT',
  noSuchCode: 'no sign-in is waiting for that code (it may have expired: start again in the terminal)',
  answered: 'that code was already approved or denied',
} as const

function newUserCode(): string {
  const picks = crypto.getRandomValues(new Uint32Array(8))
  const letters = [...picks].map((n) => USER_CODE_ALPHABET[n % USER_CODE_ALPHABET.length]).join('')
  return `${letters.slice(0, 4)}-${letters.slice(4)}`
}

/** A user code as typed (any case, dashes and spaces ignored: RFC 8628 §6.1) in its stored form; undefined when it cannot be one. */
function userCodeOf(typed: string): string | undefined {
  const letters = typed.toUpperCase().replace(/[\s-]/g, '')
  if (letters.length !== 8 || [...letters].some((c) => !USER_CODE_ALPHABET.includes(c))) return undefined
  return `${letters.slice(0, 4)}-${letters.slice(4)}`
}

export interface DeviceAuthorization {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

/**
 * Starts a device authorization (RFC 8628 §3.1, §3.2) for `client_id` (a registered application,
 * or `platform-cli`) and `scope` (the token scopes; none: `all`). Throws OAuthError.
 */
export async function startDeviceAuthorization(deps: Deps, form: Record<string, string | undefined>): Promise<DeviceAuthorization> {
  const clientId = form.client_id
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required')
  const app = clientId === CLI_CLIENT_ID ? undefined : await store.findApplicationByClientId(deps.db.read, clientId)
  if (clientId !== CLI_CLIENT_ID && !app) throw new OAuthError('invalid_client', 'unknown client_id', 401)
  const scopes = parseScopes(form.scope)
  if (!scopes) throw new OAuthError('invalid_scope', 'scopes must be among the access token scopes')
  const deviceCode = randomSecret(DEVICE_CODE_PREFIX)
  const userCode = newUserCode()
  const now = nowSeconds(deps.clock)
  await deps.db.write((tx) =>
    store.insertDeviceAuthorization(
      tx,
      {
        clientId,
        applicationId: app?.id ?? null,
        deviceCodeHash: sha256Hex(deviceCode),
        userCode,
        scopes: scopes.join(','),
        intervalSeconds: POLL_INTERVAL_SECONDS,
        expiresAt: now + DEVICE_TTL_SECONDS,
      },
      now,
    ),
  )
  const verification = `${deps.config.publicUrl}/login/device`
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: verification,
    verification_uri_complete: `${verification}?user_code=${userCode}`,
    expires_in: DEVICE_TTL_SECONDS,
    interval: POLL_INTERVAL_SECONDS,
  }
}

type PollOutcome = { error: string; description: string } | { approved: store.DeviceAuthorizationRow }

/** One poll of a device code, decided and recorded in one commit: only one poll can take an approval. */
async function poll(deps: Deps, deviceCode: string, clientId: string): Promise<PollOutcome> {
  const nowMs = deps.clock.now()
  const now = Math.floor(nowMs / 1000)
  return deps.db.write(async (tx): Promise<PollOutcome> => {
    const row = await store.findDeviceAuthorizationByDeviceCode(tx, sha256Hex(deviceCode))
    if (!row || row.clientId !== clientId)
      return { error: 'invalid_grant', description: 'the device code is unknown or belongs to another client' }
    if (row.state === 'redeemed') return { error: 'invalid_grant', description: 'the device code was already used' }
    if (row.expiresAt <= now) return { error: 'expired_token', description: 'the device code expired: start again' }
    if (row.state === 'denied') return { error: 'access_denied', description: 'the user denied the sign-in' }
    if (row.state === 'approved') {
      await store.updateDeviceAuthorization(tx, row.id, { state: 'redeemed' })
      return { approved: row }
    }
    if (row.lastPolledAt !== null && nowMs - row.lastPolledAt < row.intervalSeconds * 1000 * POLL_TOLERANCE) {
      const intervalSeconds = row.intervalSeconds + SLOW_DOWN_SECONDS
      await store.updateDeviceAuthorization(tx, row.id, { lastPolledAt: nowMs, intervalSeconds })
      return { error: 'slow_down', description: `polled too often: wait ${intervalSeconds} seconds between polls` }
    }
    await store.updateDeviceAuthorization(tx, row.id, { lastPolledAt: nowMs })
    return { error: 'authorization_pending', description: 'the user has not answered yet' }
  })
}

/**
 * The token endpoint's device_code grant (RFC 8628 §3.4, §3.5): `authorization_pending`,
 * `slow_down`, `access_denied`, `expired_token`, then the tokens once. A registered application
 * authenticates as on the other grants; `platform-cli` gets an access token of the user named
 * `platform-cli-<n>`. Throws OAuthError.
 */
export async function redeemDeviceCode(
  deps: Deps,
  form: Record<string, string | undefined>,
  authorization: string | null,
): Promise<TokenResponse> {
  if (!form.device_code) throw new OAuthError('invalid_request', 'device_code is required')
  const app = form.client_id === CLI_CLIENT_ID ? undefined : await authenticateClient(deps, form, authorization)
  const outcome = await poll(deps, form.device_code, app?.clientId ?? CLI_CLIENT_ID)
  if ('error' in outcome) throw new OAuthError(outcome.error, outcome.description)
  const { approved } = outcome
  const scopes = approved.scopes.split(',')
  if (!app) {
    const { plaintext } = await mintToken(deps.db, approved.uid!, { name: `platform-cli-${approved.id}`, scopes })
    return { access_token: plaintext, token_type: 'bearer', scope: scopes.join(' ') }
  }
  const now = nowSeconds(deps.clock)
  const tokens = newTokens(scopes, now)
  await deps.db.write((tx) => store.insertGrant(tx, { applicationId: app.id, uid: approved.uid!, codeId: null, ...tokens.row }, now))
  return tokens.response
}

/** A waiting device authorization as its approval page shows it: who asks, for what. */
export interface DeviceRequest {
  user_code: string
  client: string
  scopes: string[]
}

/** The pending authorization of `typed` at `now`, read in `tx`. Throws invalid, notFound, conflict. */
async function pendingOf(tx: Parameters<typeof store.findDeviceAuthorizationByUserCode>[0], typed: string, now: number) {
  const userCode = userCodeOf(typed)
  if (!userCode) throw new AppError('invalid', DeviceMessages.badUserCode, [{ field: 'user_code', message: DeviceMessages.badUserCode }])
  const row = await store.findDeviceAuthorizationByUserCode(tx, userCode)
  if (!row || row.expiresAt <= now) throw new AppError('notFound', DeviceMessages.noSuchCode)
  if (row.state !== 'pending') throw new AppError('conflict', DeviceMessages.answered)
  return row
}

async function present(deps: Deps, row: store.DeviceAuthorizationRow): Promise<DeviceRequest> {
  const app = row.applicationId === null ? undefined : await store.findApplicationByClientId(deps.db.read, row.clientId)
  return { user_code: row.userCode, client: app?.name ?? CLI_CLIENT_NAME, scopes: row.scopes.split(',') }
}

/** Approving hands out a credential: only a browser session or the password may (RFC 8628 §5.4), never a token. */
function assertInteractive(actor: Actor): void {
  if (actor.credential !== 'session' && actor.credential !== 'basic-password') throw new AppError('forbidden', Messages.interactiveOnly)
}

/** The waiting sign-in of a user code, for the approval page to name the client. Throws forbidden, invalid, notFound, conflict. */
export async function describeDeviceRequest(deps: Deps, actor: Actor, typed: string): Promise<DeviceRequest> {
  assertInteractive(actor)
  return present(deps, await pendingOf(deps.db.read, typed, nowSeconds(deps.clock)))
}

/** The signed-in user approves or denies a user code, once. Throws forbidden, invalid, notFound, conflict. */
export async function answerDeviceRequest(
  deps: Deps,
  actor: Actor,
  typed: string,
  approve: boolean,
): Promise<DeviceRequest & { approved: boolean }> {
  assertInteractive(actor)
  const row = await deps.db.write(async (tx) => {
    const pending = await pendingOf(tx, typed, nowSeconds(deps.clock))
    await store.updateDeviceAuthorization(tx, pending.id, { state: approve ? 'approved' : 'denied', uid: actor.user.id })
    return pending
  })
  return { ...(await present(deps, row)), approved: approve }
}
