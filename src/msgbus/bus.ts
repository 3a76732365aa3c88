import { type Deps, runtimeSlot } from '../deps'
import { AppError, messageOf } from '../errors'
import { metricsOf } from '../http/metrics'
import { accountKeys, currentAccountJwt, SYSTEM_ACCOUNT } from './accounts'
import { credsFile, newKeyPair, userJwt } from './claims'
import { connectAsSystem, PushRefused, type SystemLink } from './nats'
import { ensureOrgSubscribers, stopOrgSubscribers } from './org-subscribers'
import * as store from './store'

/**
 * The platform's one system-account connection per app: made on first need (or at start),
 * reconciling every account on connect and reconnect, pushing account JWTs one at a time.
 */

export const Messages = {
  notConfigured: 'the message bus is not configured: set MSGBUS_URLS to the NATS server URLs (see docs/api/msgbus.md)',
  unreachable: 'the message bus at MSGBUS_URLS cannot be reached; try again shortly',
  pushFailed: 'the message bus did not take the account update; it is retried on the next reconnect',
} as const

/** Throws unavailable naming MSGBUS_URLS when the message bus is not configured. */
export function assertConfigured(deps: Deps): void {
  if (deps.config.msgbusUrls.length === 0) throw new AppError('unavailable', Messages.notConfigured)
}

interface Bus {
  link: Promise<SystemLink> | undefined
  /** Pushes run one at a time: a JWT built earlier must never overwrite one built later. */
  queue: Promise<unknown>
  /** Accounts the servers took since this process connected. */
  pushed: Set<string>
  closed: boolean
}

const BUS = runtimeSlot('message bus link', (): Bus => ({ link: undefined, queue: Promise.resolve(), pushed: new Set(), closed: false }))

const busOf = (deps: Deps): Bus => deps.runtimes.of(BUS)

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
export async function systemLink(deps: Deps): Promise<SystemLink> {
  assertConfigured(deps)
  const bus = busOf(deps)
  if (bus.closed) throw new AppError('unavailable', Messages.unreachable)
  bus.link ??= openLink(deps)
  const pending = bus.link
  try {
    return await pending
  } catch {
    if (bus.link === pending) bus.link = undefined
    metricsOf(deps)?.msgbusConnected.set(0)
    throw new AppError('unavailable', Messages.unreachable)
  }
}

async function openLink(deps: Deps): Promise<SystemLink> {
  const connected = metricsOf(deps)?.msgbusConnected
  const link: SystemLink = await connectAsSystem(
    deps.config.msgbusUrls,
    await systemCreds(deps),
    () => {
      // A restarted server may have lost every pushed account: none counts as known until pushed again.
      busOf(deps).pushed.clear()
      void reconcile(deps, link).catch(() => undefined)
    },
    (up) => connected?.set(up ? 1 : 0),
  )
  connected?.set(1)
  await reconcile(deps, link)
  deps.log.info('message bus connected', { servers: deps.config.msgbusUrls })
  return link
}

/** Pushes `name`'s current JWT, after every push queued before it. Throws PushRefused. */
function pushAccount(deps: Deps, link: SystemLink, name: string): Promise<void> {
  const bus = busOf(deps)
  const run = bus.queue.then(async () => {
    const row = await store.findKey(deps.db.read, name)
    if (!row) return
    await link.pushAccount(row.publicKey, await currentAccountJwt(deps, row))
    bus.pushed.add(name)
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
      deps.log.error('message bus account push failed', {
        account: row.name,
        reason: messageOf(error),
      })
    }
    // The platform's subscribers in org accounts: opened at start, reopened if one gave up, closed for deleted orgs.
    await ensureOrgSubscribers(deps, row.name)
  }
}

/** How often a running server pushes every account again (a replayed old JWT lasts at most this long). */
const RECONCILE_EVERY_MS = 5 * 60_000

/**
 * At start: connect and reconcile, retrying every few seconds while the servers are down, then
 * reconcile every few minutes. Does nothing without MSGBUS_URLS. Returns a stop function closing
 * the connection.
 */
export function startMsgbus(deps: Deps, retryMs = 3000): () => Promise<void> {
  if (deps.config.msgbusUrls.length === 0) return async () => undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  const attempt = () => {
    systemLink(deps).catch(() => {
      if (busOf(deps).closed) return
      deps.log.error('message bus unreachable, retrying', { servers: deps.config.msgbusUrls })
      retry = setTimeout(attempt, retryMs)
    })
  }
  attempt()
  const periodic = setInterval(() => {
    void systemLink(deps)
      .then((link) => reconcile(deps, link))
      .catch(() => undefined)
  }, RECONCILE_EVERY_MS)
  periodic.unref()
  return async () => {
    clearTimeout(retry)
    clearInterval(periodic)
    await closeMsgbus(deps)
  }
}

/** Closes the system connection of `deps`, if any. */
export async function closeMsgbus(deps: Deps): Promise<void> {
  const bus = busOf(deps)
  bus.closed = true
  await stopOrgSubscribers(deps)
  const link = await bus.link?.catch(() => undefined)
  await link?.close()
}

/** Pushes `account`'s current JWT. Throws unavailable when the servers did not take it. */
export async function pushOrUnavailable(deps: Deps, link: SystemLink, account: string): Promise<void> {
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

/**
 * Pushes `account` unless the servers took it since this process connected: a user of an
 * account the servers do not know stalls and fails, and a new account (or one whose first push
 * failed) is known to nobody yet. Then makes sure the platform's subscribers run in it, so the
 * first credentials of a new org find them. Throws unavailable.
 */
export async function ensureAccountPushed(deps: Deps, link: SystemLink, account: string): Promise<void> {
  if (!busOf(deps).pushed.has(account)) await pushOrUnavailable(deps, link, account)
  await ensureOrgSubscribers(deps, account)
}
