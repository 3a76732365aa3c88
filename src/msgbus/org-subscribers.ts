import { type Deps, runtimeSlot } from '../deps'
import { messageOf } from '../errors'
import { findOrgById } from '../orgs/store'
import { accountKeys, orgAccount } from './accounts'
import { credsFile, newKeyPair, userJwt } from './claims'
import { type AccountSubscriber, type BusMessage, subscribeAsAccountUser } from './nats'

/**
 * The platform's own subscribers inside organization accounts: one connection per org account
 * and subscription, as a user the platform signs with the account's signing key. That user is no
 * MsgbusAccount row (nobody can list or revoke it), lives only in this process, may subscribe the
 * one subject and publish nothing but replies to requests it received. Account isolation is the
 * security boundary: a message reaching the subscriber of `ORG_<id>` was published in that
 * account, so it belongs to org `<id>` whatever its subject says.
 *
 * Why a subscriber per account rather than an export/import into a platform account: the
 * account JWTs stay as they are (no import to rewrite on every org rename), request/reply works
 * without response-mapping rules, and the account a message came from is known without trusting
 * the subject. The cost is one connection per org account that has issued credentials.
 */
export interface OrgAccountSubscription {
  /** What it is for: connection name and logs. */
  name: string
  subject: string
  /** Queue group: several platform processes share the messages. */
  queue: string
  /** Handles one message of the org owning the account. Must not throw. */
  handle(orgId: number, message: BusMessage): Promise<void>
}

interface Registry {
  subscriptions: Map<string, OrgAccountSubscription>
  /** `<account> <subscription>` → the subscriber being opened or open (undefined: opening failed). */
  open: Map<string, Promise<AccountSubscriber | undefined>>
  closed: boolean
}

const REGISTRY = runtimeSlot('org account subscribers', (): Registry => ({ subscriptions: new Map(), open: new Map(), closed: false }))

const registryOf = (deps: Deps): Registry => deps.runtimes.of(REGISTRY)

/** Replies only: a reply may follow a long batch queued behind others, so the permission lasts minutes. */
const REPLY_PERMISSION = { max: 1, ttl: 5 * 60 * 1e9 }

/**
 * Runs `subscription` in every org account from now on (opened as each account is pushed).
 * Does nothing without MSGBUS_URLS. Registering the same name again replaces it.
 */
export function subscribeInOrgAccounts(deps: Deps, subscription: OrgAccountSubscription): void {
  if (deps.config.msgbusUrls.length === 0) return
  registryOf(deps).subscriptions.set(subscription.name, subscription)
}

const ORG_ACCOUNT = /^ORG_(\d+)$/

/**
 * After `account` was pushed: opens its missing subscribers when it is the account of an existing
 * org, closes them when the org is gone. Never throws; a subscriber that cannot open is logged and
 * tried again at the next push or reconciliation.
 */
export async function ensureOrgSubscribers(deps: Deps, account: string): Promise<void> {
  const match = ORG_ACCOUNT.exec(account)
  const registry = registryOf(deps)
  if (!match || registry.closed || registry.subscriptions.size === 0) return
  const orgId = Number(match[1])
  try {
    if (!(await findOrgById(deps.db.read, orgId))) return await closeOrgSubscribers(deps, orgId)
  } catch (error) {
    deps.log.error('message bus subscriber not checked', { account, reason: messageOf(error) })
    return
  }
  await Promise.all([...registry.subscriptions.values()].map((s) => openSubscriber(deps, registry, orgId, s)))
}

function openSubscriber(
  deps: Deps,
  registry: Registry,
  orgId: number,
  subscription: OrgAccountSubscription,
): Promise<AccountSubscriber | undefined> {
  const account = orgAccount(orgId)
  const key = `${account} ${subscription.name}`
  const existing = registry.open.get(key)
  if (existing) return existing
  // Forgotten when it fails or gives up, so the next push or reconciliation opens a new one.
  const forget = () => {
    if (registry.open.get(key) === opening) registry.open.delete(key)
  }
  const opening = connectSubscriber(deps, account, orgId, subscription).then(
    (subscriber) => {
      void subscriber.closed.then(forget)
      if (registry.closed) void subscriber.close()
      return subscriber
    },
    (error: unknown) => {
      forget()
      deps.log.error('message bus subscriber not opened', {
        account,
        subscription: subscription.name,
        reason: messageOf(error),
      })
      return undefined
    },
  )
  registry.open.set(key, opening)
  return opening
}

/** A fresh platform user of `account` (never recorded, no expiry: it exists only in this process) subscribed. */
async function connectSubscriber(
  deps: Deps,
  account: string,
  orgId: number,
  subscription: OrgAccountSubscription,
): Promise<AccountSubscriber> {
  const keys = await accountKeys(deps, account)
  const user = newKeyPair('user')
  const jwt = await userJwt(user, keys.signer, {
    name: `platform-${subscription.name}`,
    accountPublicKey: keys.publicKey,
    permissions: { sub: { allow: [subscription.subject] }, pub: { deny: ['>'] }, resp: REPLY_PERMISSION },
  })
  return subscribeAsAccountUser(
    deps.config.msgbusUrls,
    credsFile(jwt, user),
    {
      name: `platform-api ${subscription.name} ${account}`,
      subject: subscription.subject,
      queue: subscription.queue,
    },
    (message) => subscription.handle(orgId, message),
  )
}

/** Closes the subscribers of org `orgId` (its org was deleted), or every one when none is given. */
export async function closeOrgSubscribers(deps: Deps, orgId?: number): Promise<void> {
  const registry = registryOf(deps)
  const prefix = orgId === undefined ? '' : `${orgAccount(orgId)} `
  const closing: Promise<void>[] = []
  for (const [key, opening] of registry.open) {
    if (!key.startsWith(prefix)) continue
    registry.open.delete(key)
    closing.push(opening.then((s) => s?.close()))
  }
  await Promise.all(closing)
}

/** Stops every subscriber of `deps` for good (the message bus is being closed). */
export async function stopOrgSubscribers(deps: Deps): Promise<void> {
  registryOf(deps).closed = true
  await closeOrgSubscribers(deps)
}
