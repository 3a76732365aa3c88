import type { KeyPair } from '@nats-io/jwt'
import { nowSeconds } from '../clock'
import type { Deps } from '../deps'
import { accountJwt, type KeyRole, keyPairFromSeed, newKeyPair, operatorJwt, seedOf } from './claims'
import * as store from './store'

/**
 * The platform's trust chain: operator, system account and accounts, made on first need with
 * their seeds sealed, each account's JWT built from the database, and the nats-server
 * configuration that trusts them.
 */

/** The sign-in cookie read by the websocket listener's `jwt_cookie`. */
export const MSGBUS_COOKIE = 'msgbus_jwt'

/** Account names (docs/decisions.md §6a). */
export const SYSTEM_ACCOUNT = 'SYS'
export const USERS_ACCOUNT = 'USERS'
export const orgAccount = (orgId: number) => `ORG_${orgId}`
const OPERATOR = 'operator'

/** What signs an account's users; the account's identity seed stays sealed (the operator signs the account). */
export interface AccountKeys {
  name: string
  publicKey: string
  signer: KeyPair
}

/** The key row `name`, made (and sealed) on first need; concurrent first needs keep one. */
async function ensureKeyRow(deps: Deps, name: string, role: KeyRole): Promise<store.MsgbusKeyRow> {
  const existing = await store.findKey(deps.db.read, name)
  if (existing) return existing
  const identity = newKeyPair(role)
  const signer = role === 'account' ? newKeyPair('account') : undefined
  const sealedSeed = await deps.secrets.seal(seedOf(identity))
  const sealedSigningSeed = signer ? await deps.secrets.seal(seedOf(signer)) : ''
  return deps.db.write((tx) =>
    store.insertKeyOnce(tx, {
      name,
      publicKey: identity.getPublicKey(),
      sealedSeed,
      signingPublicKey: signer?.getPublicKey() ?? '',
      sealedSigningSeed,
    }),
  )
}

async function operatorKey(deps: Deps): Promise<KeyPair> {
  const row = await ensureKeyRow(deps, OPERATOR, 'operator')
  return keyPairFromSeed(await deps.secrets.open(row.sealedSeed))
}

/** The account `name`'s public key and user signer, made on first need. */
export async function accountKeys(deps: Deps, name: string): Promise<AccountKeys> {
  const row = await ensureKeyRow(deps, name, 'account')
  return {
    name,
    publicKey: row.publicKey,
    signer: keyPairFromSeed(await deps.secrets.open(row.sealedSigningSeed)),
  }
}

/**
 * The account's JWT as the database says now: limits, signing key and every revocation whose
 * JWT has not expired yet (older ones can no longer match, so the list does not grow forever).
 */
export async function currentAccountJwt(deps: Deps, row: store.MsgbusKeyRow): Promise<string> {
  const revocations: Record<string, number> = {}
  for (const r of await store.liveRevocationsOf(deps.db.read, row.name, nowSeconds(deps.clock))) revocations[r.msgbusPubKey] = r.revokedAt
  return accountJwt(await operatorKey(deps), {
    name: row.name,
    publicKey: row.publicKey,
    signingKeys: row.signingPublicKey ? [row.signingPublicKey] : [],
    revocations,
  })
}

export interface NatsConfigOptions {
  resolverDir: string
  port: number
  host: string
  websocketPort?: number
}

/**
 * A complete nats-server configuration (docs/decisions.md §6a): operator JWT, system account, full
 * resolver in `resolverDir`, every account JWT preloaded, and a websocket listener reading the
 * sign-in cookie when `websocketPort` is given. Makes the operator and accounts on first need.
 */
export async function natsConfig(deps: Deps, options: NatsConfigOptions): Promise<string> {
  const system = await accountKeys(deps, SYSTEM_ACCOUNT)
  await accountKeys(deps, USERS_ACCOUNT)
  const operator = await operatorKey(deps)
  const preload: string[] = []
  for (const row of await store.listAccountKeys(deps.db.read))
    preload.push(`  ${row.publicKey}: ${JSON.stringify(await currentAccountJwt(deps, row))} # ${row.name}`)
  const lines = [
    '# nats-server configuration for platform-api (bun src/main.ts msgbus nats-config).',
    '# The platform pushes account updates (revocations, new org accounts) over the system account.',
    `listen: ${JSON.stringify(`${options.host}:${options.port}`)}`,
    `operator: ${JSON.stringify(await operatorJwt(operator, system.publicKey))}`,
    `system_account: ${system.publicKey}`,
    `resolver: { type: full, dir: ${JSON.stringify(options.resolverDir)}, allow_delete: false, interval: "2m", limit: 10000 }`,
    'resolver_preload: {',
    ...preload,
    '}',
  ]
  if (options.websocketPort !== undefined)
    lines.push(
      '# Browsers authenticate with the msgbus_jwt cookie set at sign-in. Put TLS in front (or add a tls block) in production.',
      'websocket {',
      `  listen: ${JSON.stringify(`${options.host}:${options.websocketPort}`)}`,
      '  no_tls: true',
      `  jwt_cookie: ${JSON.stringify(MSGBUS_COOKIE)}`,
      '}',
    )
  return `${lines.join('\n')}\n`
}
