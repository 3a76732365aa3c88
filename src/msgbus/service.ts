import type { KeyPair, Permissions } from '@nats-io/jwt'
import type { Actor } from '../authz/actor'
import { resolveCluster } from '../clusters/access'
import type { Deps } from '../deps'
import { AppError } from '../http/errors'
import { findUserByName, USER_TYPE, type UserRow } from '../identity/store'
import { accountJwt, credsFile, keyPairFromSeed, newKeyPair, operatorJwt, seedOf, userJwt, type KeyRole } from './claims'
import { connectAsSystem, PushRefused, type SystemLink } from './nats'
import type { MsgbusAccount, MsgbusCredentialsResponse } from './schemas'
import * as store from './store'

export const Messages = {
  notConfigured: 'the message bus is not configured: set MSGBUS_URLS to the NATS server URLs (see "Run with NATS" in README.md)',
  unreachable: 'the message bus at MSGBUS_URLS cannot be reached; try again shortly',
  pushFailed: 'the message bus did not take the account update; it is retried on the next reconnect',
  tokenNotFound: 'message-bus token does not exist',
  clusterContextMissing: 'owner and cluster query parameters are required',
  userNotFound: 'user does not exist',
} as const

/** Account names (decisions §6a). */
export const SYSTEM_ACCOUNT = 'SYS'
export const USERS_ACCOUNT = 'USERS'
export const orgAccount = (orgId: number) => `ORG_${orgId}`
const OPERATOR = 'operator'

/** The sign-in cookie read by the websocket listener's `jwt_cookie`. */
export const MSGBUS_COOKIE = 'msgbus_jwt'
export const COOKIE_TTL_SECONDS = 15 * 60

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Throws unavailable naming MSGBUS_URLS when the message bus is not configured. */
export function assertConfigured(deps: Deps): void {
  if (deps.config.msgbusUrls.length === 0) throw new AppError('unavailable', Messages.notConfigured)
}


interface AccountKeys {
  name: string
  publicKey: string
  identity: KeyPair
  signer: KeyPair
  /** Made by this call: the servers do not know the account yet. */
  created: boolean
}

/** The key row `name`, made (and sealed) on first need; concurrent first needs keep one. */
async function ensureKeyRow(deps: Deps, name: string, role: KeyRole): Promise<{ row: store.MsgbusKeyRow; created: boolean }> {
  const existing = await store.findKey(deps.db.read, name)
  if (existing) return { row: existing, created: false }
  const identity = newKeyPair(role)
  const signer = role === 'account' ? newKeyPair('account') : undefined
  const sealedSeed = await deps.secrets.seal(seedOf(identity))
  const sealedSigningSeed = signer ? await deps.secrets.seal(seedOf(signer)) : ''
  return deps.db.write((tx) => store.insertKeyOnce(tx, {
    name,
    publicKey: identity.getPublicKey(),
    sealedSeed,
    signingPublicKey: signer?.getPublicKey() ?? '',
    sealedSigningSeed,
  }))
}

async function operatorKey(deps: Deps): Promise<KeyPair> {
  const { row } = await ensureKeyRow(deps, OPERATOR, 'operator')
  return keyPairFromSeed(await deps.secrets.open(row.sealedSeed))
}

async function accountKeys(deps: Deps, name: string): Promise<AccountKeys> {
  const { row, created } = await ensureKeyRow(deps, name, 'account')
  return {
    name,
    publicKey: row.publicKey,
    identity: keyPairFromSeed(await deps.secrets.open(row.sealedSeed)),
    signer: keyPairFromSeed(await deps.secrets.open(row.sealedSigningSeed)),
    created,
  }
}

/**
 * The account's JWT as the database says now: limits, signing key and every revocation whose
 * JWT has not expired yet (older ones can no longer match, so the list does not grow forever).
 */
async function currentAccountJwt(deps: Deps, row: store.MsgbusKeyRow): Promise<string> {
  const revocations: Record<string, number> = {}
  for (const r of await store.liveRevocationsOf(deps.db.read, row.name, nowSeconds())) revocations[r.msgbusPubKey] = r.revokedAt
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
 * A complete nats-server configuration (decisions §6a): operator JWT, system account, full
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
  if (options.websocketPort !== undefined) lines.push(
    '# Browsers authenticate with the msgbus_jwt cookie set at sign-in. Put TLS in front (or add a tls block) in production.',
    'websocket {',
    `  listen: ${JSON.stringify(`${options.host}:${options.websocketPort}`)}`,
    '  no_tls: true',
    `  jwt_cookie: ${JSON.stringify(MSGBUS_COOKIE)}`,
    '}',
  )
  return lines.join('\n') + '\n'
}


interface Bus {
  link: Promise<SystemLink> | undefined
  /** Pushes run one at a time: a JWT built earlier must never overwrite one built later. */
  queue: Promise<unknown>
  closed: boolean
}

const buses = new WeakMap<Deps, Bus>()

function busOf(deps: Deps): Bus {
  let bus = buses.get(deps)
  if (!bus) buses.set(deps, bus = { link: undefined, queue: Promise.resolve(), closed: false })
  return bus
}

/** A fresh system-account user: only this process ever holds it. */
async function systemCreds(deps: Deps): Promise<Uint8Array> {
  const system = await accountKeys(deps, SYSTEM_ACCOUNT)
  const user = newKeyPair('user')
  return credsFile(await userJwt(user, system.signer, { name: 'platform-api', accountPublicKey: system.publicKey, permissions: {} }), user)
}

/**
 * The connected system link; the first call connects and reconciles every account. Throws
 * unavailable when not configured or no server answers (the next call tries again).
 */
async function systemLink(deps: Deps): Promise<SystemLink> {
  assertConfigured(deps)
  const bus = busOf(deps)
  if (bus.closed) throw new AppError('unavailable', Messages.unreachable)
  bus.link ??= openLink(deps)
  const pending = bus.link
  try {
    return await pending
  } catch {
    if (bus.link === pending) bus.link = undefined
    throw new AppError('unavailable', Messages.unreachable)
  }
}

async function openLink(deps: Deps): Promise<SystemLink> {
  const link: SystemLink = await connectAsSystem(deps.config.msgbusUrls, await systemCreds(deps), () => {
    void reconcile(deps, link).catch(() => undefined)
  })
  await reconcile(deps, link)
  deps.log.info('message bus connected', { servers: deps.config.msgbusUrls })
  return link
}

/** Pushes `name`'s current JWT, after every push queued before it. Throws PushRefused. */
function pushAccount(deps: Deps, link: SystemLink, name: string): Promise<void> {
  const bus = busOf(deps)
  const run = bus.queue.then(async () => {
    const row = await store.findKey(deps.db.read, name)
    if (row) await link.pushAccount(row.publicKey, await currentAccountJwt(deps, row))
  })
  bus.queue = run.catch(() => undefined)
  return run
}

/**
 * Pushes every account's current claims (SYS is preloaded and never changes), so a restarted
 * server, a wiped resolver directory or a replayed old JWT converge on the database. A failing
 * account is logged and the rest still pushed.
 */
async function reconcile(deps: Deps, link: SystemLink): Promise<void> {
  for (const row of await store.listAccountKeys(deps.db.read)) {
    if (row.name === SYSTEM_ACCOUNT) continue
    try {
      await pushAccount(deps, link, row.name)
    } catch (error) {
      deps.log.error('message bus account push failed', { account: row.name, reason: error instanceof Error ? error.message : String(error) })
    }
  }
}

/**
 * At start: connect and reconcile, retrying every few seconds while the servers are down. Does
 * nothing without MSGBUS_URLS. Returns a stop function closing the connection.
 */
export function startMsgbus(deps: Deps, retryMs = 3000): () => Promise<void> {
  if (deps.config.msgbusUrls.length === 0) return async () => undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const attempt = () => {
    systemLink(deps).catch(() => {
      if (busOf(deps).closed) return
      deps.log.error('message bus unreachable, retrying', { servers: deps.config.msgbusUrls })
      timer = setTimeout(attempt, retryMs)
    })
  }
  attempt()
  return async () => {
    clearTimeout(timer)
    await closeMsgbus(deps)
  }
}

/** Closes the system connection of `deps`, if any. */
export async function closeMsgbus(deps: Deps): Promise<void> {
  const bus = busOf(deps)
  bus.closed = true
  const link = await bus.link?.catch(() => undefined)
  await link?.close()
}


/** Personal credentials (decisions §6a): own subjects and reply inboxes. */
const personalPermissions = (uid: number): Permissions => ({
  pub: { allow: [`user.${uid}.>`, '_INBOX.>'] },
  sub: { allow: [`user.${uid}.>`, '_INBOX.>'] },
})

interface Issue {
  owner: UserRow
  accountType: string
  account: string
  permissions: Permissions
  ttlSeconds: number
  clusterId?: string
  productName?: string
}

/**
 * A new user key in `account` with `permissions`, recorded as a MsgbusAccount row; the account
 * is pushed first when new (a user of an unknown account stalls and fails). Throws unavailable.
 */
async function issue(deps: Deps, request: Issue): Promise<MsgbusCredentialsResponse> {
  const link = await systemLink(deps)
  const keys = await accountKeys(deps, request.account)
  if (keys.created) await pushOrUnavailable(deps, link, request.account)
  const user = newKeyPair('user')
  const issuedAt = nowSeconds()
  const expiresAt = issuedAt + request.ttlSeconds
  const jwt = await userJwt(user, keys.signer, {
    name: `${request.owner.name}-${request.accountType}`,
    accountPublicKey: keys.publicKey,
    permissions: request.permissions,
    expiresAt,
  })
  await deps.db.write((tx) => store.insertMsgbusAccount(tx, {
    uid: request.owner.id,
    accountType: request.accountType,
    msgbusPubKey: user.getPublicKey(),
    account: request.account,
    clusterId: request.clusterId ?? '',
    productName: request.productName ?? '',
    issuedAt,
    expiresAt,
  }))
  return { msgbusEndpoints: deps.config.msgbusUrls, credentials: Buffer.from(credsFile(jwt, user)).toString('base64') }
}

async function pushOrUnavailable(deps: Deps, link: SystemLink, account: string): Promise<void> {
  try {
    await pushAccount(deps, link, account)
  } catch (error) {
    if (error instanceof PushRefused) {
      deps.log.error('message bus account push failed', { account, reason: error.message })
      throw new AppError('unavailable', Messages.pushFailed)
    }
    throw error
  }
}

/** The caller's personal credentials: `user.<uid>.>` and `_INBOX.>`, 24 h. Throws unavailable. */
export function personalCredentials(deps: Deps, me: Actor): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: me.user, accountType: 'user', account: USERS_ACCOUNT,
    permissions: personalPermissions(me.user.id), ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/** Site admin: personal credentials of `username` (default the caller). Throws notFound, unavailable. */
export async function personalCredentialsOf(deps: Deps, me: Actor, username: string | undefined): Promise<MsgbusCredentialsResponse> {
  assertConfigured(deps)
  const owner = username === undefined || username === '' ? me.user : await findUserByName(deps.db.read, username)
  if (!owner || owner.type !== USER_TYPE.individual) throw new AppError('notFound', Messages.userNotFound)
  return issue(deps, {
    owner, accountType: 'user', account: USERS_ACCOUNT,
    permissions: personalPermissions(owner.id), ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/** Site admin: may subscribe to everything of the platform's users account. Throws unavailable. */
export function adminCredentials(deps: Deps, me: Actor): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: me.user, accountType: 'admin', account: USERS_ACCOUNT,
    permissions: { pub: { allow: ['_INBOX.>'] }, sub: { allow: ['>'] } },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/**
 * A reader of one cluster's resource history: may subscribe `crh.<clusterUID>.>` only, in the
 * account of the cluster's owner. Throws badRequest (no owner or cluster), notFound (no such
 * cluster for the caller), unavailable.
 */
export async function clusterHistoryCredentials(deps: Deps, me: Actor, query: { owner?: string; cluster?: string }): Promise<MsgbusCredentialsResponse> {
  assertConfigured(deps)
  if (!query.owner || !query.cluster) throw new AppError('badRequest', Messages.clusterContextMissing)
  const { cluster, owner } = await resolveCluster(deps, me, query.owner, query.cluster, 'read')
  return issue(deps, {
    owner: me.user, accountType: 'cluster-resource-history',
    account: owner.type === USER_TYPE.organization ? orgAccount(owner.id) : USERS_ACCOUNT,
    permissions: { pub: { deny: ['>'] }, sub: { allow: [`crh.${cluster.uid}.>`] } },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
    clusterId: cluster.uid,
  })
}

/** The org system admin's credentials in `ORG_<orgID>`: `org.<orgID>.>` and `_INBOX.>`. Throws unavailable. */
export function orgCredentials(deps: Deps, org: UserRow, systemAdmin: UserRow, target: { clusterID?: string; productName?: string }): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: systemAdmin, accountType: target.clusterID ? 'cluster' : 'org', account: orgAccount(org.id),
    permissions: { pub: { allow: [`org.${org.id}.>`, '_INBOX.>'] }, sub: { allow: [`org.${org.id}.>`, '_INBOX.>'] } },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
    clusterId: target.clusterID, productName: target.productName,
  })
}

/**
 * The short-lived bearer JWT of the sign-in cookie (personal permissions), or undefined when the
 * message bus is not configured. Not recorded: it expires within minutes.
 */
export async function signInBearerJwt(deps: Deps, uid: number): Promise<string | undefined> {
  if (deps.config.msgbusUrls.length === 0) return undefined
  const keys = await accountKeys(deps, USERS_ACCOUNT)
  return userJwt(newKeyPair('user'), keys.signer, {
    name: `user-${uid}-session`, accountPublicKey: keys.publicKey,
    permissions: personalPermissions(uid), expiresAt: nowSeconds() + COOKIE_TTL_SECONDS, bearer: true,
  })
}


const presentAccount = (row: store.MsgbusAccountRow): MsgbusAccount => ({
  id: row.id,
  uid: row.uid,
  accountType: row.accountType,
  msgbusPubKey: row.msgbusPubKey,
  clusterID: row.clusterId,
  productName: row.productName,
  revoked: row.revokedAt !== null,
})

/** `uid`'s issued message-bus keys, newest first. Throws unavailable when not configured. */
export async function listTokens(deps: Deps, uid: number): Promise<MsgbusAccount[]> {
  assertConfigured(deps)
  return (await store.listMsgbusAccountsOf(deps.db.read, uid)).map(presentAccount)
}

/**
 * Revokes `uid`'s key `id`: records it, re-signs the whole account JWT with every revocation and
 * pushes it (live connections drop at once). Idempotent. Throws notFound (`missing` decides the
 * kind: the org routes answer 400), unavailable (the push did not take; the next reconnect or
 * start retries it).
 */
export async function revokeToken(deps: Deps, uid: number, id: number, missing: 'notFound' | 'badRequest' = 'notFound'): Promise<void> {
  // An id that is not the caller's is answered as such even without a message bus: no 503 for bad input.
  const row = Number.isSafeInteger(id) ? await store.findMsgbusAccountOf(deps.db.read, uid, id) : undefined
  if (!row) throw new AppError(missing, Messages.tokenNotFound)
  assertConfigured(deps)
  await deps.db.write((tx) => store.markRevoked(tx, row.id, nowSeconds()))
  await pushOrUnavailable(deps, await systemLink(deps), row.account)
}
