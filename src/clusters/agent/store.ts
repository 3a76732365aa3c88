import { and, eq, gte, inArray, lt } from 'drizzle-orm'
import { agentTunnels, clusters } from '../../../db/schema/clusters'
import type { Executor } from '../../storage/database'

export type TunnelRow = typeof agentTunnels.$inferSelect

/** Records a tunnel this process holds now. */
export async function insertTunnel(db: Executor, row: TunnelRow): Promise<void> {
  await db.insert(agentTunnels).values(row)
  await db.update(clusters).set({ agentLastSeen: row.lastSeen }).where(eq(clusters.id, row.clusterId))
}

/** The tunnel ended: its row goes, and its cluster keeps when it was last heard. */
export async function deleteTunnel(db: Executor, id: string, clusterId: number, lastSeen: Date): Promise<void> {
  await db.delete(agentTunnels).where(eq(agentTunnels.id, id))
  await db.update(clusters).set({ agentLastSeen: lastSeen }).where(eq(clusters.id, clusterId))
}

/** The tunnels `ids` (this process's) are alive at `now`: their rows and their clusters say so. */
export async function refreshTunnels(db: Executor, ids: string[], clusterIds: number[], now: Date): Promise<void> {
  if (ids.length === 0) return
  await db.update(agentTunnels).set({ lastSeen: now }).where(inArray(agentTunnels.id, ids))
  await db.update(clusters).set({ agentLastSeen: now }).where(inArray(clusters.id, clusterIds))
}

/** Tunnels of `clusterId` refreshed since `freshSince`, oldest first: those whose holder is alive. */
export async function liveTunnelsOf(db: Executor, clusterId: number, freshSince: Date): Promise<TunnelRow[]> {
  return db
    .select()
    .from(agentTunnels)
    .where(and(eq(agentTunnels.clusterId, clusterId), gte(agentTunnels.lastSeen, freshSince)))
    .orderBy(agentTunnels.connectedAt)
    .all()
}

/** Forgets tunnels not refreshed since `before`: their process died without saying so. */
export async function deleteStaleTunnels(db: Executor, before: Date): Promise<void> {
  await db.delete(agentTunnels).where(lt(agentTunnels.lastSeen, before))
}

/** The agent token digests of `clusterIds` now (a rotated token no longer matches what a tunnel was opened with). */
export async function agentTokenHashes(db: Executor, clusterIds: number[]): Promise<Map<number, string | null>> {
  if (clusterIds.length === 0) return new Map()
  const rows = await db
    .select({ id: clusters.id, hash: clusters.agentTokenHash })
    .from(clusters)
    .where(inArray(clusters.id, clusterIds))
    .all()
  return new Map(rows.map((r) => [r.id, r.hash]))
}

/** When an agent of `clusterId` was last heard, by any process. */
export async function agentLastSeen(db: Executor, clusterId: number): Promise<Date | null | undefined> {
  const [row] = await db.select({ lastSeen: clusters.agentLastSeen }).from(clusters).where(eq(clusters.id, clusterId))
  return row?.lastSeen
}
