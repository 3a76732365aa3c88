import { rfc3339 } from '../../clock'
import { type Deps, runtimeSlot } from '../../deps'
import { AppError, messageOf } from '../../errors'
import type { Tunnel } from '../../net/tunnel/mux'
import { Relays } from './relay'
import * as store from './store'

/**
 * The agent tunnels this process holds, and how any process reaches any agent cluster
 * (docs/agents.md, "Several platform processes"). A tunnel is recorded in `agent_tunnels` with the
 * address of this process's peer listener; a process without a tunnel for a cluster reaches it
 * through the holder's (relay.ts). One timer per process pings every tunnel and refreshes the rows.
 */

/** How often each held tunnel's row (and its cluster's lastSeen) is refreshed. */
const REFRESH_MS = 5_000
/** A tunnel row older than this belongs to a process that died: it counts as gone. */
const STALE_MS = 3 * REFRESH_MS
/** How often the tunnels are ticked (pings, silence, open deadlines). */
const TICK_MS = 1_000

export interface AgentStatus {
  connected: boolean
  since?: string
  lastSeen?: string
  version?: string
  address?: string
}

export interface HeldTunnel {
  /** The `agent_tunnels` row's id. */
  id: string
  clusterId: number
  /** The digest of the token the agent presented: a rotation changes the cluster's, and the tunnel goes. */
  tokenHash: string
  tunnel: Tunnel
  connectedAt: number
  agentVersion: string
  sourceAddress: string
  /** Once the tunnel ended: its row's removal. */
  released?: Promise<void>
}

/** The uid of an agent cluster until its first agent reports the cluster's own. */
export const PENDING_UID_PREFIX = 'pending-'

export const AgentMessages = {
  noAgent: (cluster: string, lastSeen: number | null | undefined) =>
    `cluster "${cluster}" has no agent connected (${lastSeen ? `last seen ${rfc3339(new Date(lastSeen))}` : 'no agent has connected yet'}): start its agent (docs/agents.md)`,
  rotated: 'the agent token was replaced',
} as const

export class AgentTunnels {
  private readonly byCluster = new Map<number, Set<HeldTunnel>>()
  readonly byId = new Map<string, HeldTunnel>()
  readonly relays: Relays
  private timer: Timer | undefined
  private lastRefresh = 0

  constructor(private readonly deps: Deps) {
    this.relays = new Relays(deps, this)
  }

  /** Starts holding `held` (its hello was accepted): recorded so every process can reach it. */
  async hold(held: HeldTunnel): Promise<void> {
    const peerAddress = await this.relays.peerAddress()
    const now = new Date(this.deps.clock.now())
    await this.deps.db.write((tx) =>
      store.insertTunnel(tx, {
        id: held.id,
        clusterId: held.clusterId,
        peerAddress,
        agentVersion: held.agentVersion,
        sourceAddress: held.sourceAddress,
        connectedAt: new Date(held.connectedAt),
        lastSeen: now,
      }),
    )
    // Ended while its row was being written: the row goes again.
    if (held.released || held.tunnel.closedReason !== undefined) {
      held.released = undefined
      return this.release(held)
    }
    const set = this.byCluster.get(held.clusterId) ?? new Set()
    set.add(held)
    this.byCluster.set(held.clusterId, set)
    this.byId.set(held.id, held)
    this.timer ??= setInterval(() => this.tick(), TICK_MS)
  }

  /** The tunnel ended: forgotten here and in the database (once, however often it is asked). */
  release(held: HeldTunnel): Promise<void> {
    held.released ??= (async () => {
      this.byId.delete(held.id)
      const set = this.byCluster.get(held.clusterId)
      set?.delete(held)
      if (set?.size === 0) this.byCluster.delete(held.clusterId)
      await this.deps.db.write((tx) => store.deleteTunnel(tx, held.id, held.clusterId, new Date(this.deps.clock.now())))
    })()
    return held.released
  }

  /** A tunnel of `clusterId` held here, the one with the fewest streams; undefined when none. */
  localTunnel(clusterId: number): HeldTunnel | undefined {
    let best: HeldTunnel | undefined
    for (const held of this.byCluster.get(clusterId) ?? [])
      if (held.tunnel.closedReason === undefined && (!best || held.tunnel.streamCount < best.tunnel.streamCount)) best = held
    return best
  }

  /** Closes the tunnels of `clusterId` held here (its token was rotated, it was removed). */
  disconnect(clusterId: number, reason: string): void {
    for (const held of [...(this.byCluster.get(clusterId) ?? [])]) held.tunnel.close(reason, 4001)
  }

  /** The cluster was removed: its tunnels here close and its relay port goes. */
  forgetCluster(clusterId: number): void {
    this.disconnect(clusterId, 'the cluster was removed')
    this.relays.forget(clusterId)
  }

  /** Tunnels of the cluster alive anywhere (here, or recorded by a live process), oldest first. */
  async liveTunnels(clusterId: number): Promise<store.TunnelRow[]> {
    return store.liveTunnelsOf(this.deps.db.read, clusterId, new Date(this.deps.clock.now() - STALE_MS))
  }

  /** ClusterInfo.status.agent of an agent cluster: connected now (by any process), since, last seen, version, address. */
  async statusOf(row: { id: number; agentLastSeen: Date | null }): Promise<AgentStatus> {
    const live = await this.liveTunnels(row.id)
    const first = live[0]
    const lastSeen = live.length > 0 ? Math.max(...live.map((t) => t.lastSeen.getTime())) : row.agentLastSeen?.getTime()
    return {
      connected: live.length > 0,
      ...(first ? { since: rfc3339(first.connectedAt), version: first.agentVersion, address: first.sourceAddress } : {}),
      ...(lastSeen ? { lastSeen: rfc3339(lastSeen) } : {}),
    }
  }

  /**
   * The loopback port through which `cluster` is reached now. Throws unavailable (503) naming when
   * an agent was last seen when none is connected to any process.
   */
  async relayPort(clusterId: number, clusterName: string, lastSeen: () => Promise<Date | null | undefined>): Promise<number> {
    if (!this.localTunnel(clusterId) && (await this.liveTunnels(clusterId)).length === 0)
      throw new AppError('unavailable', AgentMessages.noAgent(clusterName, (await lastSeen())?.getTime()), [], { 'retry-after': '5' })
    return this.relays.portFor(clusterId)
  }

  private tick(): void {
    const now = this.deps.clock.now()
    for (const held of this.byId.values()) held.tunnel.tick(now)
    if (now - this.lastRefresh < REFRESH_MS) return
    this.lastRefresh = now
    this.refresh(now).catch((error: unknown) => this.deps.log.error('agent tunnels not refreshed', { error: messageOf(error) }))
  }

  /** Refreshes this process's rows, forgets dead processes' rows, and closes tunnels whose token was rotated. */
  private async refresh(now: number): Promise<void> {
    const held = [...this.byId.values()]
    const clusterIds = [...this.byCluster.keys()]
    await this.deps.db.write(async (tx) => {
      await store.refreshTunnels(
        tx,
        held.map((h) => h.id),
        clusterIds,
        new Date(now),
      )
      await store.deleteStaleTunnels(tx, new Date(now - STALE_MS))
    })
    const hashes = await store.agentTokenHashes(this.deps.db.read, clusterIds)
    for (const h of held) if (hashes.get(h.clusterId) !== h.tokenHash) h.tunnel.close(AgentMessages.rotated, 4001)
  }

  /** Closes every tunnel (their agents reconnect, to this process's successor or another) and forgets their rows. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    const held = [...this.byId.values()]
    for (const h of held) h.tunnel.close('the platform is stopping', 1001)
    this.relays.close()
    await Promise.allSettled(held.map((h) => this.release(h)))
  }
}

const TUNNELS = runtimeSlot(
  'clusters.agent-tunnels',
  (deps) => new AgentTunnels(deps),
  (tunnels) => tunnels.close(),
)

/** This app's agent tunnels. */
export const agentTunnels = (deps: Deps): AgentTunnels => deps.runtimes.of(TUNNELS)
