import { and, asc, eq, inArray } from 'drizzle-orm'
import { clusters, users } from '../../db/schema'
import { AppError } from '../http/errors'
import { isUniqueViolation, type Executor } from '../storage/database'

export type ClusterRow = typeof clusters.$inferSelect
export type NewCluster = typeof clusters.$inferInsert
export type ClusterWithOwner = ClusterRow & { ownerName: string }

const withOwner = { cluster: clusters, ownerName: users.name }

/** Clusters owned by any of `ownerIds`, oldest first, with the owner's name. */
export async function listClustersOfOwners(db: Executor, ownerIds: number[]): Promise<ClusterWithOwner[]> {
  if (ownerIds.length === 0) return []
  const rows = await db.select(withOwner).from(clusters).innerJoin(users, eq(users.id, clusters.ownerId))
    .where(inArray(clusters.ownerId, ownerIds)).orderBy(asc(clusters.id)).all()
  return rows.map((r) => ({ ...r.cluster, ownerName: r.ownerName }))
}

export async function findClusterOfOwner(db: Executor, ownerId: number, name: string): Promise<ClusterRow | undefined> {
  return db.select().from(clusters).where(and(eq(clusters.ownerId, ownerId), eq(clusters.lowerName, name.toLowerCase()))).get()
}

/** Inserts a cluster; a name the owner already uses is `duplicate`. */
export async function insertCluster(db: Executor, cluster: NewCluster): Promise<ClusterRow> {
  try {
    const [row] = await db.insert(clusters).values(cluster).returning()
    return row
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', 'a cluster with this name already exists for this owner', [{ field: 'name', message: 'is already used' }]) : e
  }
}

export async function updateClusterConnection(db: Executor, id: number, changes: Pick<NewCluster, 'server' | 'caData' | 'tlsServerName' | 'insecureSkipTlsVerify' | 'sealedCredential'>): Promise<void> {
  await db.update(clusters).set(changes).where(eq(clusters.id, id))
}
