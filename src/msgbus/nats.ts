import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node'

/**
 * The one module that talks to NATS: a system-account connection that pushes account JWTs and
 * reads them back. The system credential never leaves this process (whoever holds one can push an
 * old account JWT and so lift revocations).
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
export async function connectAsSystem(servers: string[], creds: Uint8Array, onReconnect: () => void): Promise<SystemLink> {
  const nc = await connect({
    servers,
    authenticator: credsAuthenticator(creds),
    name: 'platform-api',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: REQUEST_TIMEOUT_MS,
  })
  void watchReconnects(nc, onReconnect)
  return {
    pushAccount: (accountPublicKey, jwt) => pushAccount(nc, accountPublicKey, jwt),
    close: async () => { if (!nc.isClosed()) await nc.close() },
  }
}

async function watchReconnects(nc: NatsConnection, onReconnect: () => void): Promise<void> {
  for await (const status of nc.status()) if (status.type === 'reconnect') onReconnect()
}

/**
 * `$SYS.REQ.ACCOUNT.<A>.CLAIMS.UPDATE`, then a LOOKUP: the full resolver answers "jwt updated"
 * even for a JWT it will not load, so only reading it back proves the push.
 */
async function pushAccount(nc: NatsConnection, accountPublicKey: string, jwt: string): Promise<void> {
  let reply: ClaimsUpdateReply
  try {
    reply = (await nc.request(`$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.UPDATE`, jwt, { timeout: REQUEST_TIMEOUT_MS })).json<ClaimsUpdateReply>()
  } catch (error) {
    throw new PushRefused(`no answer to the account update: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (reply.data?.code !== 200) throw new PushRefused(`account update refused: ${reply.error?.description ?? 'no reason given'}`)
  const stored = await nc.request(`$SYS.REQ.ACCOUNT.${accountPublicKey}.CLAIMS.LOOKUP`, '', { timeout: REQUEST_TIMEOUT_MS })
    .then((m) => m.string(), () => '')
  if (stored !== jwt) throw new PushRefused('the server does not hold the pushed account JWT')
}
