import { USER_TYPE } from '../../db/schema/identity'
import type { Actor } from '../authz/actor'
import { accessAllows, type ClusterAccess, clusterAccess } from '../authz/clusters'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { findAccountByName, type UserRow } from '../identity/store'
import { commitCache } from '../storage/commit-cache'
import * as store from './store'

export const AccessMessages = {
  notFound: 'cluster not found',
  ownerNotFound: 'owner not found',
  needsWrite: 'your access to this cluster is read-only',
  needsManage: "only the cluster's owner, or an owner or admin of its organization, may change it",
} as const

const resolutions = commitCache<ResolvedCluster | undefined>()

export interface ResolvedCluster {
  cluster: store.ClusterRow
  owner: UserRow
  access: ClusterAccess
}

/** The facts authz/clusters decides on, read for `actor` and one cluster (or, with no cluster, its owner only). */
async function accessOf(deps: Deps, actor: Actor, owner: UserRow, clusterId: number | undefined): Promise<ClusterAccess | undefined> {
  const orgRole = owner.type === USER_TYPE.organization ? await deps.orgFacts.orgRoleOf(owner.id, actor.user.id) : undefined
  return clusterAccess({
    siteAdmin: actor.user.isAdmin,
    ownsCluster: owner.id === actor.user.id,
    orgRole,
    grantedTeamPermissions: clusterId === undefined ? [] : await store.grantedTeamPermissions(deps.db.read, clusterId, actor.user.id),
  })
}

/**
 * The cluster `ownerName/clusterName` as `actor` may use it, with at least `needed` access. A
 * cluster that does not exist and one the actor may not use at all are the same 404; one they
 * may use with less than `needed` is 403. This is the one access check of the registry and the proxy.
 */
export async function resolveCluster(
  deps: Deps,
  actor: Actor,
  ownerName: string,
  clusterName: string,
  needed: ClusterAccess,
): Promise<ResolvedCluster> {
  // The proxy asks this on every request: answers are kept until the next commit of any kind.
  const key = `${actor.user.id}\u0000${actor.user.isAdmin}\u0000${ownerName.toLowerCase()}\u0000${clusterName.toLowerCase()}`
  const found = await resolutions(deps.db, key, async () => {
    const owner = await findAccountByName(deps.db.read, ownerName)
    const cluster = owner ? await store.findClusterOfOwner(deps.db.read, owner.id, clusterName) : undefined
    const access = owner && cluster ? await accessOf(deps, actor, owner, cluster.id) : undefined
    return owner && cluster && access ? { owner, cluster, access } : undefined
  })
  if (!found) throw new AppError('notFound', AccessMessages.notFound)
  const { owner, cluster, access } = found
  if (!accessAllows(access, needed))
    throw new AppError('forbidden', needed === 'manage' ? AccessMessages.needsManage : AccessMessages.needsWrite)
  return { cluster, owner, access }
}

/** The owner whose clusters `actor` manages (themselves, an org they own or administer; site admins: anyone). Throws notFound. */
export async function manageableOwner(deps: Deps, actor: Actor, ownerName: string): Promise<UserRow> {
  const owner = await findAccountByName(deps.db.read, ownerName)
  if (!owner || (await accessOf(deps, actor, owner, undefined)) !== 'manage') throw new AppError('notFound', AccessMessages.ownerNotFound)
  return owner
}

/** The clusters of `ownerName` the actor may use: all of them for a manager, else the ones granted to their teams. Throws notFound. */
export async function usableClustersOf(deps: Deps, actor: Actor, ownerName: string): Promise<store.ClusterWithOwner[]> {
  const owner = await findAccountByName(deps.db.read, ownerName)
  if (!owner) throw new AppError('notFound', AccessMessages.ownerNotFound)
  if ((await accessOf(deps, actor, owner, undefined)) === 'manage') return store.listClustersOfOwners(deps.db.read, [owner.id])
  const granted = (await store.listClustersGrantedTo(deps.db.read, actor.user.id)).filter((c) => c.ownerId === owner.id)
  if (granted.length === 0) throw new AppError('notFound', AccessMessages.ownerNotFound)
  return granted
}

/** The actor's cluster with `uid` (several owners may register one cluster: the first the actor may use). Throws notFound, forbidden. */
export async function resolveClusterByUid(deps: Deps, actor: Actor, uid: string, needed: ClusterAccess): Promise<store.ClusterWithOwner> {
  for (const cluster of await store.listClustersByUid(deps.db.read, uid)) {
    const owner = await findAccountByName(deps.db.read, cluster.ownerName)
    const access = owner ? await accessOf(deps, actor, owner, cluster.id) : undefined
    if (!access) continue
    if (!accessAllows(access, needed)) throw new AppError('forbidden', AccessMessages.needsWrite)
    return cluster
  }
  throw new AppError('notFound', AccessMessages.notFound)
}
