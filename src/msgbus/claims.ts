import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  fromSeed,
  type KeyPair,
  type Permissions,
  type RevocationList,
} from '@nats-io/jwt'

/**
 * Keys and JWTs of the message bus's trust chain (operator → account → user), with no I/O.
 * Every account JWT carries the full `limits` object: jwt.js adds no defaults, and an account JWT
 * without limits means zero connections (pushing one drops every client of the account).
 */
const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 }

export type KeyRole = 'operator' | 'account' | 'user'

/** A fresh key pair of `role`; the seed text starts with SO/SA/SU, the public key with O/A/U. */
export function newKeyPair(role: KeyRole): KeyPair {
  return role === 'operator' ? createOperator() : role === 'account' ? createAccount() : createUser()
}

export const seedOf = (kp: KeyPair): string => new TextDecoder().decode(kp.getSeed())
export const keyPairFromSeed = (seed: string): KeyPair => fromSeed(new TextEncoder().encode(seed))

export function operatorJwt(operator: KeyPair, systemAccountPublicKey: string): Promise<string> {
  return encodeOperator('platform', operator, { system_account: systemAccountPublicKey })
}

export interface AccountClaims {
  name: string
  publicKey: string
  /** Public keys that may sign this account's users. */
  signingKeys: string[]
  /** User public key → Unix seconds: JWTs of that key issued at or before it are refused. */
  revocations: RevocationList
}

/** The whole account JWT: a push replaces every claim, so nothing may be left out. */
export function accountJwt(operator: KeyPair, claims: AccountClaims): Promise<string> {
  return encodeAccount(
    claims.name,
    claims.publicKey,
    {
      limits: UNLIMITED,
      signing_keys: claims.signingKeys,
      revocations: claims.revocations,
    },
    { signer: operator },
  )
}

export interface UserGrant {
  /** A readable label (`name` claim). */
  name: string
  /** The account the user lives in. */
  accountPublicKey: string
  permissions: Permissions
  /** Unix seconds; none for the platform's own system user. */
  expiresAt?: number
  /** A bearer JWT needs no seed signature (the websocket `jwt_cookie`). */
  bearer?: boolean
}

/** Signs a user JWT for `user` with the account's signing key (or identity key for SYS). */
export function userJwt(user: KeyPair, signer: KeyPair, grant: UserGrant): Promise<string> {
  return encodeUser(
    grant.name,
    user,
    grant.accountPublicKey,
    {
      ...grant.permissions,
      ...(grant.bearer ? { bearer_token: true } : {}),
    },
    { signer, ...(grant.expiresAt === undefined ? {} : { exp: grant.expiresAt }) },
  )
}

/**
 * Now as jwt.js stamps a JWT's `iat`: the wall clock, to the second. nats-server refuses a revoked
 * key's JWTs whose `iat` is at or before the revocation time, so that time is read from the same
 * clock, never from the app's injected one (which tests move).
 */
export const issuedAtNow = (): number => Math.floor(Date.now() / 1000)

/** The standard `.creds` text (LF only, trailing newline), as nats.js and the Go client parse it. */
export function credsFile(jwt: string, user: KeyPair): Uint8Array {
  return fmtCreds(jwt, user)
}
