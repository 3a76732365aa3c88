import { and, asc, eq, inArray, type SQL } from 'drizzle-orm'
import { clusters, teamClusters } from '../../db/schema/clusters'
import { AppError } from '../errors'
import { accounts } from '../identity/store'
import { teamsOfOrg, teamsOfUser } from '../orgs/store'
import { type Executor, isUniqueViolation, uniqueViolationColumns } from '../storage/database'

export type ClusterRow = typeof clusters.$inferSelect
export type NewCluster = typeof clusters.$inferInsert
export type ClusterWithOwner = ClusterRow & { ownerName: string }

export const StoreMessages = {
  nameTaken: 'this owner already has a cluster with that name',
  uidTaken: 'this owner already registered that cluster (same kube-system uid) under another name',
} as const

const withOwner = { cluster: clusters, ownerName: accounts.name }
const flatten = (rows: { cluster: ClusterRow; ownerName: string }[]): ClusterWithOwner[] =>
  rows.map((r) => ({ ...r.cluster, ownerName: r.ownerName }))

/** The clusters `where` selects (all of them without it), oldest first, each with its owner's name. */
async function clustersWithOwner(db: Executor, where?: SQL): Promise<ClusterWithOwner[]> {
  const query = db.select(withOwner).from(clusters).innerJoin(accounts, eq(accounts.id, clusters.ownerId))
  return flatten(await (where ? query.where(where) : query).orderBy(asc(clusters.id)).all())
}

/** Clusters owned by any of `ownerIds`, oldest first, with the owner's name. */
export async function listClustersOfOwners(db: Executor, ownerIds: number[]): Promise<ClusterWithOwner[]> {
  return ownerIds.length === 0 ? [] : clustersWithOwner(db, inArray(clusters.ownerId, ownerIds))
}

/** Every cluster, or `ownerId`'s, oldest first. */
export async function listClusters(db: Executor, ownerId?: number): Promise<ClusterWithOwner[]> {
  return clustersWithOwner(db, ownerId === undefined ? undefined : eq(clusters.ownerId, ownerId))
}

/** Clusters granted to any team `uid` belongs to, oldest first. */
export async function listClustersGrantedTo(db: Executor, uid: number): Promise<ClusterWithOwner[]> {
  const memberOf = teamsOfUser(uid)
  return flatten(
    await db
      .selectDistinct(withOwner)
      .from(teamClusters)
      .innerJoin(memberOf, eq(memberOf.id, teamClusters.teamId))
      .innerJoin(clusters, eq(clusters.id, teamClusters.clusterId))
      .innerJoin(accounts, eq(accounts.id, clusters.ownerId))
      .orderBy(asc(clusters.id))
      .all(),
  )
}

/** `uid`'s teams that were granted cluster `clusterId`: their names and permissions, by name. */
export async function grantedTeams(db: Executor, clusterId: number, uid: number): Promise<{ name: string; permission: string }[]> {
  const memberOf = teamsOfUser(uid)
  return db
    .select({ name: memberOf.name, permission: memberOf.permission })
    .from(teamClusters)
    .innerJoin(memberOf, eq(memberOf.id, teamClusters.teamId))
    .where(eq(teamClusters.clusterId, clusterId))
    .orderBy(asc(memberOf.name))
    .all()
}

/** The teams granted cluster `cluster` (always teams of its owner, an org): their ids, names and permissions, by name (case ignored). */
export async function teamsGranted(db: Executor, cluster: ClusterRow): Promise<{ id: number; name: string; permission: string }[]> {
  const ofOwner = teamsOfOrg(cluster.ownerId)
  return db
    .select({ id: ofOwner.id, name: ofOwner.name, permission: ofOwner.permission })
    .from(teamClusters)
    .innerJoin(ofOwner, eq(ofOwner.id, teamClusters.teamId))
    .where(eq(teamClusters.clusterId, cluster.id))
    .orderBy(asc(ofOwner.lowerName))
    .all()
}

/** Registrations of the cluster `uid`, oldest first. */
export async function listClustersByUid(db: Executor, uid: string): Promise<ClusterWithOwner[]> {
  return clustersWithOwner(db, eq(clusters.uid, uid))
}

/** The agent cluster whose agent token has the digest `hash`. */
export async function findClusterByAgentToken(db: Executor, hash: string): Promise<ClusterWithOwner | undefined> {
  return (await clustersWithOwner(db, eq(clusters.agentTokenHash, hash)))[0]
}

export async function findClusterOfOwner(db: Executor, ownerId: number, name: string): Promise<ClusterRow | undefined> {
  return db
    .select()
    .from(clusters)
    .where(and(eq(clusters.ownerId, ownerId), eq(clusters.lowerName, name.toLowerCase())))
    .get()
}

/** Inserts a cluster; a name or a uid the owner already has is `conflict` (409). */
export async function insertCluster(db: Executor, cluster: NewCluster): Promise<ClusterRow> {
  try {
    const [row] = await db.insert(clusters).values(cluster).returning()
    return row!
  } catch (e) {
    throw uniqueConflict(e)
  }
}

/**
 * Updates a cluster's registration; undefined when it is gone. A name or uid taken is `conflict`.
 * A PATCH that changes nothing reads the row as it is (an empty SET is no statement SQL has).
 */
export async function updateCluster(db: Executor, id: number, changes: Partial<NewCluster>): Promise<ClusterRow | undefined> {
  if (Object.keys(changes).length === 0) return (await db.select().from(clusters).where(eq(clusters.id, id)))[0]
  try {
    const [row] = await db.update(clusters).set(changes).where(eq(clusters.id, id)).returning()
    return row
  } catch (e) {
    throw uniqueConflict(e)
  }
}

function uniqueConflict(e: unknown): unknown {
  if (!isUniqueViolation(e)) return e
  const byUid = /clusters\.uid/.test(uniqueViolationColumns(e) ?? '')
  return byUid
    ? new AppError('conflict', StoreMessages.uidTaken)
    : new AppError('conflict', StoreMessages.nameTaken, [{ field: 'name', message: 'is already used' }])
}

export async function deleteCluster(db: Executor, id: number): Promise<void> {
  await db.delete(clusters).where(eq(clusters.id, id))
}

/** Clusters granted to team `teamId`, oldest first. */
export async function listTeamClusters(db: Executor, teamId: number): Promise<ClusterWithOwner[]> {
  return flatten(
    await db
      .select(withOwner)
      .from(teamClusters)
      .innerJoin(clusters, eq(clusters.id, teamClusters.clusterId))
      .innerJoin(accounts, eq(accounts.id, clusters.ownerId))
      .where(eq(teamClusters.teamId, teamId))
      .orderBy(asc(clusters.id))
      .all(),
  )
}

/** Grants the cluster to the team (idempotent). */
export async function grantCluster(tx: Executor, teamId: number, clusterId: number): Promise<void> {
  await tx.insert(teamClusters).values({ teamId, clusterId }).onConflictDoNothing()
}

export async function revokeCluster(tx: Executor, teamId: number, clusterId: number): Promise<void> {
  await tx.delete(teamClusters).where(and(eq(teamClusters.teamId, teamId), eq(teamClusters.clusterId, clusterId)))
}
