import { USER_TYPE } from '../../db/schema/codes'
import type { Actor } from '../authz/actor'
import type { OrgFacts } from '../authz/authorize'
import {
  accessAllows,
  type ClusterAccess,
  type ClusterFacts,
  ClusterMessages,
  type ClusterRelation,
  clusterAccess,
  type FoundCluster,
} from '../authz/clusters'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { findAccountByName, type UserRow } from '../identity/store'
import { commitCache } from '../storage/commit-cache'
import type { Database } from '../storage/database'
import * as store from './store'

export const AccessMessages = {
  ...ClusterMessages,
  ownerNotFound: 'owner not found',
} as const

/** How `actor` relates to one cluster of `owner` (or, with no cluster, to the owner only): what authz/clusters decides on. */
async function relationOf(
  db: Database,
  orgFacts: OrgFacts,
  actor: Actor,
  owner: UserRow,
  clusterId: number | undefined,
): Promise<ClusterRelation> {
  return {
    siteAdmin: actor.user.isAdmin,
    ownsCluster: owner.id === actor.user.id,
    orgRole: owner.type === USER_TYPE.organization ? await orgFacts.orgRoleOf(owner.id, actor.user.id) : undefined,
    grantedTeams: clusterId === undefined ? [] : await store.grantedTeams(db.read, clusterId, actor.user.id),
  }
}

/**
 * The cluster facts authz loads a route's cluster scope from (Deps.clusterFacts). The proxy asks
 * them on every request: answers are kept until the next commit of any kind.
 */
export function clusterFacts(db: Database, orgFacts: OrgFacts): ClusterFacts {
  const found = commitCache<FoundCluster | undefined>()
  return {
    findCluster: (actor, ownerName, clusterName) =>
      found(
        db,
        `${actor.user.id}\u0000${actor.user.isAdmin}\u0000${ownerName.toLowerCase()}\u0000${clusterName.toLowerCase()}`,
        async () => {
          const owner = await findAccountByName(db.read, ownerName)
          const cluster = owner ? await store.findClusterOfOwner(db.read, owner.id, clusterName) : undefined
          return owner && cluster ? { owner, cluster, relation: await relationOf(db, orgFacts, actor, owner, cluster.id) } : undefined
        },
      ),
  }
}

/** What `actor` may do with the clusters of `owner` as a whole: `manage` for the owner, its org's owners and admins, site admins. */
const ownerAccess = async (deps: Deps, actor: Actor, owner: UserRow) =>
  clusterAccess(await relationOf(deps.db, deps.orgFacts, actor, owner, undefined))

/** The owner whose clusters `actor` manages (themselves, an org they own or administer; site admins: anyone). Throws notFound. */
export async function manageableOwner(deps: Deps, actor: Actor, ownerName: string): Promise<UserRow> {
  const owner = await findAccountByName(deps.db.read, ownerName)
  if (!owner || (await ownerAccess(deps, actor, owner)) !== 'manage') throw new AppError('notFound', AccessMessages.ownerNotFound)
  return owner
}

/** The clusters of `ownerName` the actor may use: all of them for a manager, else the ones granted to their teams. Throws notFound. */
export async function usableClustersOf(deps: Deps, actor: Actor, ownerName: string): Promise<store.ClusterWithOwner[]> {
  const owner = await findAccountByName(deps.db.read, ownerName)
  if (!owner) throw new AppError('notFound', AccessMessages.ownerNotFound)
  if ((await ownerAccess(deps, actor, owner)) === 'manage') return store.listClustersOfOwners(deps.db.read, [owner.id])
  const granted = (await store.listClustersGrantedTo(deps.db.read, actor.user.id)).filter((c) => c.ownerId === owner.id)
  if (granted.length === 0) throw new AppError('notFound', AccessMessages.ownerNotFound)
  return granted
}

/** The actor's cluster with `uid` (several owners may register one cluster: the first the actor may use). Throws notFound, forbidden. */
export async function resolveClusterByUid(deps: Deps, actor: Actor, uid: string, needed: ClusterAccess): Promise<store.ClusterWithOwner> {
  for (const cluster of await store.listClustersByUid(deps.db.read, uid)) {
    const owner = await findAccountByName(deps.db.read, cluster.ownerName)
    const access = owner ? clusterAccess(await relationOf(deps.db, deps.orgFacts, actor, owner, cluster.id)) : undefined
    if (!access) continue
    if (!accessAllows(access, needed)) throw new AppError('forbidden', AccessMessages.needsWrite)
    return cluster
  }
  throw new AppError('notFound', AccessMessages.notFound)
}
