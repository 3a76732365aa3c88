import type { Server, ServerWebSocket } from 'bun'
import { auditAgent, auditNotRecorded } from '../../audit/recorder'
import { BoundedCache } from '../../bounded-cache'
import { type Deps, runtimeSlot } from '../../deps'
import { AppError, messageOf } from '../../errors'
import { clientAddress } from '../../http/client-address'
import { requestIdOfRequest } from '../../http/request-log'
import { assertWebSocketHandshake } from '../../http/websocket-upgrade'
import { decode, encode, Frame } from '../../net/tunnel/frames'
import { Tunnel } from '../../net/tunnel/mux'
import type { ClusterWithOwner } from '../store'
import { acceptHello, bearerOf, clusterOfAgentToken } from './service'
import { agentTunnels, type HeldTunnel } from './tunnels'

/**
 * The agent's side door (docs/agents.md, "Connecting"): `GET /api/v1/agent/connect` with the
 * agent token, upgraded to a WebSocket that carries the tunnel. What an attacker can make it do
 * is bounded: refused tokens from one address are limited per minute, a cluster holds at most
 * MAX_AGENTS_PER_CLUSTER tunnels, a socket that says no hello in HELLO_TIMEOUT_MS is closed, and
 * every refusal is an `agent` audit event (up to the limit).
 */

export const ConnectMessages = {
  tooManyFailures: 'too many refused agent connections from this address; wait a minute',
  tooManyAgents: (n: number) => `this cluster has ${n} agents connected already, the most it may have`,
  noHello: 'no hello within 10 s',
} as const

/** Agents of one cluster connected at once (high availability needs two or three). */
const MAX_AGENTS_PER_CLUSTER = 8
/** Refused connections one address may make per minute before it is answered 429 without a look. */
export const MAX_REFUSALS_PER_MINUTE = 10
const HELLO_TIMEOUT_MS = 10_000
/** WebSocket close codes: 4001 token refused or replaced, 4003 another cluster, 4008 hello missing or invalid. */
const CLOSE = { refused: 4003, badHello: 4008 } as const

/** Refusals per source address in the current minute (a bounded map: a flood of addresses evicts old ones, never grows it). */
const REFUSALS = runtimeSlot('clusters.agent-refusals', () => new BoundedCache<{ minute: number; count: number }>(1024 * 1024))

/**
 * Admits an agent's WebSocket: checks the address's refusal budget, the token, the handshake and
 * the cluster's agent count, then upgrades. Throws tooManyRequests, unauthenticated, badRequest.
 */
export async function openAgentTunnel(deps: Deps, request: Request, server: Server<unknown> | null): Promise<undefined> {
  // Its events are `agent` events, written below; the request's own `api` event would say less, twice.
  auditNotRecorded()
  const sourceAddress = server ? clientAddress(server, request, deps.config.trustedProxies) : ''
  const requestId = requestIdOfRequest(request) ?? ''
  const refusals = deps.runtimes.of(REFUSALS)
  const minute = Math.floor(deps.clock.now() / 60_000)
  const seen = refusals.get(sourceAddress)
  const refusedSoFar = seen?.minute === minute ? seen.count : 0
  if (refusedSoFar >= MAX_REFUSALS_PER_MINUTE)
    throw new AppError('tooManyRequests', ConnectMessages.tooManyFailures, [], { 'retry-after': '60' })
  const refuse = async (error: AppError, cluster?: ClusterWithOwner): Promise<never> => {
    refusals.set(sourceAddress, { minute, count: refusedSoFar + 1 }, 64)
    await recordAgent(deps, { verb: 'refused', status: error.kind === 'unauthenticated' ? 401 : 403, requestId, sourceAddress }, cluster)
    throw error
  }
  const cluster = await clusterOfAgentToken(deps, bearerOf(request.headers.get('authorization')))
  if (!cluster)
    return refuse(new AppError('unauthenticated', 'the agent token is not valid (it may have been replaced by a later connect)'))
  assertWebSocketHandshake(request)
  const tunnels = agentTunnels(deps)
  if ((await tunnels.liveTunnels(cluster.id)).length >= MAX_AGENTS_PER_CLUSTER)
    return refuse(new AppError('forbidden', ConnectMessages.tooManyAgents(MAX_AGENTS_PER_CLUSTER)), cluster)
  if (!server?.upgrade(request, { data: agentSocket(deps, cluster, { requestId, sourceAddress }) }))
    throw new AppError('badRequest', 'the connection could not be switched to a WebSocket')
  return undefined
}

interface Origin {
  requestId: string
  sourceAddress: string
}

/** The handlers of one agent's WebSocket: the hello, then every message into the tunnel. */
function agentSocket(deps: Deps, cluster: ClusterWithOwner, origin: Origin) {
  let tunnel: Tunnel | undefined
  let helloTimer: Timer | undefined
  let saidHello = false
  const closeWith = (ws: ServerWebSocket<unknown>, code: number, reason: string) => ws.close(code, reason.slice(0, 120))
  return {
    open(ws: ServerWebSocket<unknown>) {
      helloTimer = setTimeout(() => closeWith(ws, CLOSE.badHello, ConnectMessages.noHello), HELLO_TIMEOUT_MS)
    },
    message(ws: ServerWebSocket<unknown>, message: string | Buffer) {
      if (typeof message === 'string') return closeWith(ws, 1003, 'binary frames only')
      if (tunnel) return tunnel.receive(message)
      const frame = decode(message)
      if (saidHello || frame?.type !== Frame.hello || frame.stream !== 0)
        return closeWith(ws, CLOSE.badHello, 'the first frame must be the hello')
      saidHello = true
      clearTimeout(helloTimer)
      welcome(ws, new TextDecoder().decode(frame.payload)).catch((error: unknown) => {
        deps.log.error('agent tunnel not opened', { cluster: `${cluster.ownerName}/${cluster.name}`, error: messageOf(error) })
        closeWith(ws, 1011, 'the platform could not open the tunnel')
      })
    },
    close(_ws: ServerWebSocket<unknown>, code: number, reason: string) {
      clearTimeout(helloTimer)
      tunnel?.close(reason || `closed by the agent (${code})`, code)
    },
  }

  async function welcome(ws: ServerWebSocket<unknown>, hello: string): Promise<void> {
    let facts: Awaited<ReturnType<typeof acceptHello>>
    try {
      facts = await acceptHello(deps, cluster, hello)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      await recordAgent(deps, { verb: 'refused', status: error.kind === 'forbidden' ? 403 : 422, ...origin }, cluster)
      return closeWith(ws, error.kind === 'forbidden' ? CLOSE.refused : CLOSE.badHello, error.message)
    }
    const open = new Tunnel(
      { send: (frame) => ws.send(frame) !== 0, close: (code, reason) => ws.close(code, reason) },
      {
        role: 'platform',
        now: () => deps.clock.now(),
        closed: (reason) => {
          agentTunnels(deps)
            .release(held)
            .then(() => recordAgent(deps, { verb: 'disconnected', status: 1000, ...origin }, cluster))
            .catch((error: unknown) => deps.log.error('agent tunnel not released', { reason, error: messageOf(error) }))
        },
      },
    )
    const held: HeldTunnel = {
      id: crypto.randomUUID(),
      clusterId: cluster.id,
      tokenHash: cluster.agentTokenHash ?? '',
      tunnel: open,
      connectedAt: deps.clock.now(),
      agentVersion: facts.agentVersion,
      sourceAddress: origin.sourceAddress,
    }
    await agentTunnels(deps).hold(held)
    tunnel = open
    ws.send(encode(Frame.welcome, 0))
    await recordAgent(deps, { verb: 'connected', status: 101, ...origin }, cluster)
  }
}

/** An `agent` audit event about `cluster` (with its org, when an org owns it). */
async function recordAgent(
  deps: Deps,
  facts: { verb: 'connected' | 'disconnected' | 'refused'; status: number; requestId: string; sourceAddress: string },
  cluster?: ClusterWithOwner,
): Promise<void> {
  const org = cluster ? await deps.orgFacts.findOrgByName(cluster.ownerName) : undefined
  await auditAgent(deps, { ...facts, ...(cluster ? { cluster: `${cluster.ownerName}/${cluster.name}` } : {}), ...(org ? { org } : {}) })
}
