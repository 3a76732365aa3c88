import { createPublicKey, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, importPKCS8, type JWK, SignJWT } from 'jose'
import { nowSeconds } from '../../clock'
import { type Deps, runtimeSlot } from '../../deps'
import { AppError } from '../../errors'
import type { UserRow } from '../../identity/store'
import { listOrgsOfUser } from '../store'
import type { HostedToken, HostedTokenJwks } from './schemas'

export const Messages = {
  notConfigured: 'hosted tokens are not configured: set PLATFORM_HOSTED_TOKEN_KEY to a PEM PKCS#8 EC P-256 private key',
  badKey: 'PLATFORM_HOSTED_TOKEN_KEY is not a PEM PKCS#8 EC P-256 private key',
} as const

/** Lifetime of a hosted token (docs/decisions.md §6a). */
const HOSTED_TOKEN_TTL_SECONDS = 600

interface PublicJwk {
  kty: string
  crv: string
  x: string
  y: string
  kid: string
}

interface SigningKey {
  privateKey: CryptoKey | KeyObject
  publicJwk: PublicJwk
}

const SIGNING_KEY = runtimeSlot('hosted-token signing key', (deps) => importKey(deps.config.hostedTokenKey ?? ''))

/** The configured key, imported once per app. Throws unavailable (unset or unusable). */
async function signingKey(deps: Deps): Promise<SigningKey> {
  if (deps.config.hostedTokenKey === undefined) throw new AppError('unavailable', Messages.notConfigured)
  try {
    return await deps.runtimes.of(SIGNING_KEY)
  } catch {
    throw new AppError('unavailable', Messages.badKey)
  }
}

async function importKey(pem: string): Promise<SigningKey> {
  const privateKey = await importPKCS8(pem, 'ES256', { extractable: true })
  const jwk: JWK = await exportJWK(createPublicKey(pem))
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) throw new Error('not an EC P-256 key')
  // Only the public members: the JWKS must never carry `d`.
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }
  return { privateKey, publicJwk: { ...publicJwk, kid: await calculateJwkThumbprint(publicJwk) } }
}

/**
 * An ES256 JWT for the hosting vendor's services: `{sub: login, uid, orgs, iat, exp: iat + 600}`.
 * Throws unavailable when no key is configured.
 */
export async function hostedToken(deps: Deps, user: UserRow): Promise<HostedToken> {
  const key = await signingKey(deps)
  const { rows } = await listOrgsOfUser(deps.db.read, user.id, 'all', { limit: 1000, offset: 0 })
  const iat = nowSeconds(deps.clock)
  const jwt = await new SignJWT({ uid: user.id, orgs: rows.map((org) => org.name) })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: key.publicJwk.kid })
    .setSubject(user.name)
    .setIssuedAt(iat)
    .setExpirationTime(iat + HOSTED_TOKEN_TTL_SECONDS)
    .sign(key.privateKey)
  return { hostedToken: jwt }
}

/** The public key verifiers use. Throws unavailable when no key is configured. */
export async function hostedTokenJwks(deps: Deps): Promise<HostedTokenJwks> {
  const key = await signingKey(deps)
  return { keys: [{ ...key.publicJwk, alg: 'ES256', use: 'sig' }] }
}
