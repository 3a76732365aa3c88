import { connect, credsAuthenticator, headers, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { messageOf } from '../errors'

/**
 * The one module that talks to NATS: a system-account connection that pushes account JWTs and
 * reads them back, and the platform's own subscribers inside accounts. The system credential never
 * leaves this process (whoever holds one can push an old account JWT and so lift revocations).
 */
export interface SystemLink {
  /** Pushes an account JWT and checks the server stored exactly it. Throws PushRefused. */
  pushAccount(accountPublicKey: string, jwt: string): Promise<void>
  close(): Promise<void>
}

export class PushRefused extends Error {}

const REQUEST_TIMEOUT_MS = 2000

interface ClaimsUpdateReply {
  data?: { code?: number; message?: string }
  error?: { code?: number; description?: string }
}

/**
 * Connects to `servers` with the system user's `.creds`, reconnecting forever; `onReconnect`
 * runs after every reconnect (a restarted server may have lost pushed claims). Throws when no
 * server answers the first connect.
 */
export async function connectAsSystem(
  servers: string[],
  creds: Uint8Array,
  onReconnect: () => void,
  onConnection: (up: boolean) => void = () => undefined,
): Promise<SystemLink> {
  const nc = await connect({
    servers,
    authenticator: credsAuthenticator(creds),
    name: 'platform-api',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: REQUEST_TIMEOUT_MS,
  })
  void watchReconnects(nc, onReconnect, onConnection)
  return {
    pushAccount: (accountPublicKey, jwt) => pushAccount(nc, accountPublicKey, jwt),
    close: async () => {
      if (!nc.isClosed()) await nc.close()
    },
  }
}

async function watchReconnects(nc: NatsConnection, onReconnect: () => void, onConnection: (up: boolean) => void): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === 'disconnect') onConnection(false)
    if (status.type === 'reconnect') {
      onConnection(true)
      onReconnect()
    }
  }
}

/**
 * `$SYS.REQ.ACCOUNT.<A>.CLAIMS.UPDATE`, then a LOOKUP: the full resolver answers "jwt updated"
 * even for a JWT it will not load, so only reading it back proves the push.
 */
async function pushAccount(nc: NatsConnection, accountPublicKey: string, jwt: string): Promise<void> {
  let reply: ClaimsUpdateReply
  try {
    reply = (
      await nc.request(`$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.UPDATE`, jwt, { timeout: REQUEST_TIMEOUT_MS })
    ).json<ClaimsUpdateReply>()
  } catch (error) {
    throw new PushRefused(`no answer to the account update: ${messageOf(error)}`)
  }
  if (reply.data?.code !== 200) throw new PushRefused(`account update refused: ${reply.error?.description ?? 'no reason given'}`)
  const stored = await nc.request(`$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.LOOKUP`, '', { timeout: REQUEST_TIMEOUT_MS }).then(
    (m) => m.string(),
    () => '',
  )
  if (stored !== jwt) throw new PushRefused('the server does not hold the pushed account JWT')
}

/** A message a platform subscriber received. */
export interface BusMessage {
  subject: string
  data: Uint8Array
  /** True when the publisher waits for an answer (request/reply). */
  expectsReply: boolean
  /** Answers a request with `body` (and headers); does nothing without a reply subject. */
  respond(body: string, headerValues?: Record<string, string>): void
}

export interface AccountSubscriber {
  /** Resolves once the connection is closed for good (on purpose, or the client gave up). */
  closed: Promise<void>
  close(): Promise<void>
}

export interface SubscriberOptions {
  /** Connection name, shown by the server's monitoring. */
  name: string
  subject: string
  /** Queue group: each message goes to one subscriber of the group, so several platform processes share the work. */
  queue: string
}

/**
 * Connects with an account user's `.creds` and subscribes, handing messages one at a time to
 * `handle` (which must not throw); reconnects and resubscribes forever, through authorization
 * errors too (a restarted server may not know the account until the platform pushes it again).
 * Throws when no server answers the first connect.
 */
export async function subscribeAsAccountUser(
  servers: string[],
  creds: Uint8Array,
  options: SubscriberOptions,
  handle: (message: BusMessage) => Promise<void>,
): Promise<AccountSubscriber> {
  const nc = await connect({
    servers,
    authenticator: credsAuthenticator(creds),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    ignoreAuthErrorAbort: true,
    timeout: REQUEST_TIMEOUT_MS,
  })
  const subscription = nc.subscribe(options.subject, { queue: options.queue })
  let stopping = false
  let inFlight: Promise<void> = Promise.resolve()
  void (async () => {
    for await (const m of subscription) {
      if (stopping) break
      inFlight = handle(busMessage(m)).catch(() => undefined)
      await inFlight
    }
  })().catch(() => undefined)
  // The server has the subscription once the flush returns: a request right after finds it.
  await nc.flush()
  return {
    closed: nc.closed().then(() => undefined),
    // The message being handled is finished and answered first; later ones are left to the publisher's retry.
    close: async () => {
      stopping = true
      await inFlight
      if (!nc.isClosed()) await nc.close()
    },
  }
}

function busMessage(m: Msg): BusMessage {
  return {
    subject: m.subject,
    data: m.data,
    expectsReply: Boolean(m.reply),
    respond: (body, headerValues) => {
      if (!m.reply) return
      const h = headerValues ? headers() : undefined
      for (const [key, value] of Object.entries(headerValues ?? {})) h!.set(key, value)
      try {
        m.respond(body, h ? { headers: h } : undefined)
      } catch {
        // The connection closed meanwhile: the requester times out, as with any lost reply.
      }
    },
  }
}

export interface AccountPublisher {
  /** Publishes `data` on `subject`; kept while the connection reconnects, dropped once it is closed. */
  publish(subject: string, data: string): void
  close(): Promise<void>
}

/** Connects with an account user's `.creds` to publish, reconnecting forever. Throws when no server answers the first connect. */
export async function publishAsAccountUser(servers: string[], creds: Uint8Array, name: string): Promise<AccountPublisher> {
  const nc = await connect({
    servers,
    authenticator: credsAuthenticator(creds),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    ignoreAuthErrorAbort: true,
    timeout: REQUEST_TIMEOUT_MS,
  })
  return {
    publish: (subject, data) => {
      if (!nc.isClosed()) nc.publish(subject, data)
    },
    close: async () => {
      if (!nc.isClosed()) await nc.drain()
    },
  }
}
