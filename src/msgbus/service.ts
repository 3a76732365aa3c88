import type { Permissions } from '@nats-io/jwt'
import { USER_TYPE } from '../../db/schema/codes'
import type { Actor } from '../authz/actor'
import { clusterScopeFor } from '../authz/clusters'
import { nowSeconds } from '../clock'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { findUserByName, type UserRow } from '../identity/store'
import { accountKeys, orgAccount, USERS_ACCOUNT } from './accounts'
import { assertConfigured, Messages as BusMessages, ensureAccountPushed, pushOrUnavailable, systemLink } from './bus'
import { credsFile, issuedAtNow, newKeyPair, userJwt } from './claims'
import { auditSubject } from './org-publisher'
import type { MsgbusAccount, MsgbusCredentialsResponse } from './schemas'
import * as store from './store'

export { MSGBUS_COOKIE } from './accounts'

export const Messages = {
  ...BusMessages,
  tokenNotFound: 'message-bus token does not exist',
  clusterContextMissing: 'owner and cluster query parameters are required',
  userNotFound: 'user does not exist',
} as const

/** Lifetime of the sign-in cookie's bearer JWT. */
export const COOKIE_TTL_SECONDS = 15 * 60

/** Where an org's agents publish usage events (docs/decisions.md §5a). */
const usageEventsSubject = (orgName: string) => `usage.events.${orgName}`

/** The reply-inbox prefix of user `uid`'s personal credentials: clients set it as `inboxPrefix`. */
export const personalInboxPrefix = (uid: number) => `_INBOX_${uid}`

/** How long a personal credential may answer a request it received (nats-server reads nanoseconds). */
const RESPONSE_WINDOW_NS = 60 * 1_000_000_000

/**
 * Personal credentials (docs/decisions.md §6a): the user's own subjects, replies only into their
 * own inbox prefix, and answers to requests they received through response permissions. Never
 * the shared `_INBOX.>`: in the one USERS account it would let any user read or forge another
 * user's replies.
 */
const personalPermissions = (uid: number): Permissions => ({
  pub: { allow: [`user.${uid}.>`] },
  sub: { allow: [`user.${uid}.>`, `${personalInboxPrefix(uid)}.>`] },
  resp: { max: 1, ttl: RESPONSE_WINDOW_NS },
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
  await ensureAccountPushed(deps, link, request.account)
  const user = newKeyPair('user')
  const issuedAt = nowSeconds(deps.clock)
  const expiresAt = issuedAt + request.ttlSeconds
  const jwt = await userJwt(user, keys.signer, {
    name: `${request.owner.name}-${request.accountType}`,
    accountPublicKey: keys.publicKey,
    permissions: request.permissions,
    expiresAt,
  })
  await deps.db.write((tx) =>
    store.insertMsgbusAccount(tx, {
      uid: request.owner.id,
      accountType: request.accountType,
      msgbusPubKey: user.getPublicKey(),
      account: request.account,
      clusterId: request.clusterId ?? '',
      productName: request.productName ?? '',
      issuedAt,
      expiresAt,
    }),
  )
  return { msgbusEndpoints: deps.config.msgbusUrls, credentials: Buffer.from(credsFile(jwt, user)).toString('base64') }
}

/** The caller's personal credentials: `user.<uid>.>` and the inbox `_INBOX_<uid>.>`, 24 h. Throws unavailable. */
export function personalCredentials(deps: Deps, me: Actor): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: me.user,
    accountType: 'user',
    account: USERS_ACCOUNT,
    permissions: personalPermissions(me.user.id),
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/** Site admin: personal credentials of `username` (default the caller). Throws notFound, unavailable. */
export async function personalCredentialsOf(deps: Deps, me: Actor, username: string | undefined): Promise<MsgbusCredentialsResponse> {
  assertConfigured(deps)
  const owner = username === undefined || username === '' ? me.user : await findUserByName(deps.db.read, username)
  if (!owner || owner.type !== USER_TYPE.individual) throw new AppError('notFound', Messages.userNotFound)
  return issue(deps, {
    owner,
    accountType: 'user',
    account: USERS_ACCOUNT,
    permissions: personalPermissions(owner.id),
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/** Site admin: may subscribe to everything of the platform's users account. Throws unavailable. */
export function adminCredentials(deps: Deps, me: Actor): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: me.user,
    accountType: 'admin',
    account: USERS_ACCOUNT,
    permissions: { pub: { allow: ['_INBOX.>'] }, sub: { allow: ['>'] } },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
  })
}

/**
 * A reader of one cluster's resource history: may subscribe `crh.<clusterUID>.>` only, in the
 * account of the cluster's owner. Throws badRequest (no owner or cluster), notFound (no such
 * cluster for the caller), unavailable.
 */
export async function clusterHistoryCredentials(
  deps: Deps,
  me: Actor,
  query: { owner?: string; cluster?: string },
): Promise<MsgbusCredentialsResponse> {
  assertConfigured(deps)
  if (!query.owner || !query.cluster) throw new AppError('badRequest', Messages.clusterContextMissing)
  const { cluster, owner } = await clusterScopeFor(deps.clusterFacts, me, 'read', query.owner, query.cluster)
  return issue(deps, {
    owner: me.user,
    accountType: 'cluster-resource-history',
    account: owner.type === USER_TYPE.organization ? orgAccount(owner.id) : USERS_ACCOUNT,
    permissions: { pub: { deny: ['>'] }, sub: { allow: [`crh.${cluster.uid}.>`] } },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
    clusterId: cluster.uid,
  })
}

/**
 * The org system admin's credentials in `ORG_<orgID>`: `org.<orgID>.>` and `_INBOX.>`, and
 * publishing usage events on `usage.events.<org name>` (ingested in billing mode). The name is
 * the one at issue time; after a rename the account's subscriber refuses the old one (the
 * account, not the subject, decides the org), so an agent fetches new credentials.
 * Throws unavailable.
 */
export function orgCredentials(
  deps: Deps,
  org: UserRow,
  systemAdmin: UserRow,
  target: { clusterID?: string; productName?: string },
): Promise<MsgbusCredentialsResponse> {
  return issue(deps, {
    owner: systemAdmin,
    accountType: target.clusterID ? 'cluster' : 'org',
    account: orgAccount(org.id),
    permissions: {
      pub: { allow: [`org.${org.id}.>`, '_INBOX.>', usageEventsSubject(org.name)] },
      // Org-wide credentials (no cluster's) may also follow the org's audit trail.
      sub: { allow: [`org.${org.id}.>`, '_INBOX.>', ...(target.clusterID ? [] : [auditSubject(org.name)])] },
    },
    ttlSeconds: deps.config.msgbusCredentialTtlSeconds,
    clusterId: target.clusterID,
    productName: target.productName,
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
    name: `user-${uid}-session`,
    accountPublicKey: keys.publicKey,
    permissions: personalPermissions(uid),
    expiresAt: nowSeconds(deps.clock) + COOKIE_TTL_SECONDS,
    bearer: true,
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
  // Compared by nats-server with the `iat` jwt.js stamped: the wall clock, not deps.clock.
  await deps.db.write((tx) => store.markRevoked(tx, row.id, issuedAtNow()))
  await pushOrUnavailable(deps, await systemLink(deps), row.account)
}
