import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import { nowSeconds, rfc3339 } from '../../../clock'
import type { Deps } from '../../../deps'
import { AppError } from '../../../errors'
import type { UserRow } from '../../store'
import * as store from './store'

export const Messages = {
  nameTaken: 'a security key with this name is already registered',
  noChallenge: 'no registration in progress, or it expired: call request_register again',
  rejected: 'the security key response could not be verified',
  keyNotFound: 'security key not found',
  assertionRejected: "the security key's signature could not be verified",
  unknownKey: 'this security key is not registered to the account',
} as const

/** How long a registration challenge stays usable. */
export const CHALLENGE_TTL_SECONDS = 5 * 60

/** The relying party is the public URL: its host name is the RP id, its origin the only accepted origin. */
function relyingParty(deps: Deps) {
  const url = new URL(deps.config.publicUrl)
  return { rpID: url.hostname, origin: url.origin }
}

const present = (row: store.CredentialRow) => ({ id: row.id, name: row.name, createdAt: rfc3339(row.createdAt) })

export async function listSecurityKeys(deps: Deps, uid: number) {
  return (await store.listCredentials(deps.db.read, uid)).map(present)
}

/**
 * Creation options for a new key named `name`; the challenge is kept server-side (one per user,
 * replacing an earlier one) for CHALLENGE_TTL_SECONDS. Throws duplicate for a name in use.
 */
export async function requestRegistration(deps: Deps, user: UserRow, name: string) {
  if (await store.findCredentialByName(deps.db.read, user.id, name))
    throw new AppError('duplicate', Messages.nameTaken, [{ field: 'name', message: 'is already used' }])
  const existing = await store.listCredentials(deps.db.read, user.id)
  const { rpID } = relyingParty(deps)
  const options = await generateRegistrationOptions({
    rpName: rpID,
    rpID,
    userName: user.name,
    userDisplayName: user.fullName || user.name,
    userID: new TextEncoder().encode(`user-${user.id}`),
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((key) => ({
      id: key.credentialId,
      transports: key.transports ? key.transports.split(',') : undefined,
    })),
    authenticatorSelection: { residentKey: 'discouraged', userVerification: 'discouraged' },
  })
  await deps.db.write((tx) =>
    store.replaceChallenge(tx, {
      uid: user.id,
      challenge: options.challenge,
      name,
      expiresAt: nowSeconds(deps.clock) + CHALLENGE_TTL_SECONDS,
    }),
  )
  return { publicKey: options as unknown as Record<string, unknown> }
}

/**
 * Verifies the browser's attestation against the pending challenge (consumed first, so it works
 * once) and stores the key. Throws badRequest for a missing, expired or failed challenge, duplicate
 * for a key or name already registered.
 */
export async function registerSecurityKey(deps: Deps, uid: number, response: RegistrationResponseJSON) {
  const challenge = await deps.db.write((tx) => store.takeChallenge(tx, uid))
  if (!challenge || challenge.expiresAt <= nowSeconds(deps.clock)) throw new AppError('badRequest', Messages.noChallenge)
  const { rpID, origin } = relyingParty(deps)
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    })
  } catch (e) {
    // The library's reason (wrong origin, bad signature, ...) names no secret; it helps the client.
    throw new AppError('badRequest', `${Messages.rejected}: ${e instanceof Error ? e.message : 'unknown reason'}`)
  }
  if (!verified.verified) throw new AppError('badRequest', Messages.rejected)
  const { credential, aaguid } = verified.registrationInfo
  // The library trusts the id inside the authenticator data; a response naming another id was altered.
  if (credential.id !== response.id || response.rawId !== response.id)
    throw new AppError('badRequest', `${Messages.rejected}: the credential id does not match the authenticator data`)
  const row = await deps.db.write((tx) =>
    store.insertCredential(tx, {
      uid,
      name: challenge.name,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      signCount: credential.counter,
      transports: (credential.transports ?? []).join(','),
      aaguid,
    }),
  )
  return present(row)
}

/** Deletes one of the user's keys. Throws notFound. */
export async function deleteSecurityKey(deps: Deps, uid: number, id: number): Promise<void> {
  const gone = await deps.db.write((tx) => store.deleteCredential(tx, uid, id))
  if (!gone) throw new AppError('notFound', Messages.keyNotFound)
}

/** Request options for signing in with one of the user's keys; the caller keeps the challenge. */
export async function requestAssertion(deps: Deps, uid: number): Promise<{ publicKey: Record<string, unknown>; challenge: string }> {
  const keys = await store.listCredentials(deps.db.read, uid)
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps).rpID,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: 'discouraged',
    allowCredentials: keys.map((key) => ({ id: key.credentialId, transports: key.transports ? key.transports.split(',') : undefined })),
  })
  return { publicKey: options as unknown as Record<string, unknown>, challenge: options.challenge }
}

/**
 * Verifies a sign-in assertion by one of the user's keys against `challenge` and moves the key's
 * counter forward (a counter that goes back means a cloned key: refused). Throws unauthenticated.
 */
export async function verifyAssertion(deps: Deps, uid: number, response: AuthenticationResponseJSON, challenge: string): Promise<void> {
  const key = typeof response.id === 'string' ? await store.findCredentialById(deps.db.read, uid, response.id) : undefined
  if (!key) throw new AppError('unauthenticated', Messages.unknownKey)
  const { rpID, origin } = relyingParty(deps)
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
      credential: { id: key.credentialId, publicKey: Uint8Array.from(Buffer.from(key.publicKey, 'base64url')), counter: key.signCount },
    })
  } catch (e) {
    throw new AppError('unauthenticated', `${Messages.assertionRejected}: ${e instanceof Error ? e.message : 'unknown reason'}`)
  }
  if (!verified.verified) throw new AppError('unauthenticated', Messages.assertionRejected)
  await deps.db.write((tx) => store.updateSignCount(tx, key.id, verified.authenticationInfo.newCounter))
}

/** Whether the user has registered a security key. */
export async function hasSecurityKey(deps: Deps, uid: number): Promise<boolean> {
  return (await store.listCredentials(deps.db.read, uid)).length > 0
}
