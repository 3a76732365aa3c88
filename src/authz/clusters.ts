import type { clusters } from '../../db/schema/clusters'
import type { users } from '../../db/schema/identity'
import { AppError } from '../errors'
import { type Actor, assertTokenScope } from './actor'
import { type RouteParams, signedInCaller } from './authorize'
import type { OrgRole } from './permissions'

type UserRow = typeof users.$inferSelect
type ClusterRow = typeof clusters.$inferSelect

/**
 * Who may use a member cluster (docs/decisions.md §3, §3a), as one table. `manage`: register, change,
 * remove and grant it, and every verb through the proxy; `write`: every verb through the proxy
 * (exec included); `read`: get, list, watch, logs and metrics only. No access at all is 404.
 */
export type ClusterAccess = 'read' | 'write' | 'manage'

/**
 * What a request does with a cluster, declared by its route (`inCluster`), and what it needs:
 * - `read`: get, list, watch, logs, metrics, access reviews: read access, a `read:cluster` token;
 * - `write`: every other verb through the proxy: write access, a `write:cluster` token;
 * - `exec`: exec, attach, port-forward and any other upgrade, which open a session in the
 *   cluster (the apiserver asks `create` on `pods/exec` for this reason): write access and a
 *   `write:cluster` token, whatever the method;
 * - `manage`: change, remove or grant the registration: manage access, a `write:cluster` token.
 */
export type ClusterVerb = 'read' | 'write' | 'exec' | 'manage'

const ACCESS_NEEDED: Record<ClusterVerb, ClusterAccess> = { read: 'read', write: 'write', exec: 'write', manage: 'manage' }

/** How a caller relates to one cluster: what the table decides on. */
export interface ClusterRelation {
  siteAdmin: boolean
  /** The caller is the owning user. */
  ownsCluster: boolean
  /** The caller's role in the owning organization; undefined for a user-owned cluster or a non-member. */
  orgRole: OrgRole | undefined
  /** The caller's teams that were granted this cluster, with their permissions (`read`, `write`, `admin`, `owner`). */
  grantedTeams: readonly { name: string; permission: string }[]
}

const RANK: Record<ClusterAccess, number> = { read: 1, write: 2, manage: 3 }

/** The table: owner user, site admins, org owners and admins manage; granted teams read or write by their permission. */
export function clusterAccess(relation: ClusterRelation): ClusterAccess | undefined {
  if (relation.siteAdmin || relation.ownsCluster || relation.orgRole === 'owner' || relation.orgRole === 'admin') return 'manage'
  const permissions = relation.grantedTeams.map((team) => team.permission)
  if (permissions.some((p) => p === 'write' || p === 'admin' || p === 'owner')) return 'write'
  if (permissions.includes('read')) return 'read'
  return undefined
}

/** True when `held` is at least `needed`. */
export const accessAllows = (held: ClusterAccess, needed: ClusterAccess): boolean => RANK[held] >= RANK[needed]

/** A cluster and its owner as found by name, with how the caller relates to it. */
export interface FoundCluster {
  owner: UserRow
  cluster: ClusterRow
  relation: ClusterRelation
}

/**
 * The cluster facts a cluster scope is loaded from. authz declares what it needs;
 * `clusters/access.ts` answers it, and Deps hands it over (so authz imports no area).
 */
export interface ClusterFacts {
  /** The cluster `clusterName` of the account `ownerName` (both case-insensitive) as `actor` relates to it; undefined when either does not exist. */
  findCluster(actor: Actor, ownerName: string, clusterName: string): Promise<FoundCluster | undefined>
}

/** The cluster a request is about, as the caller may use it. Handed to handlers as `cluster`. */
export interface ClusterScope {
  owner: UserRow
  cluster: ClusterRow
  /** What the caller may do with it (at least what the route needed). */
  access: ClusterAccess
  /** The names of the caller's teams that were granted it (the owning organization's teams). */
  grantedTeams: readonly string[]
}

export const ClusterMessages = {
  notFound: 'cluster not found',
  badName: 'the owner and cluster names must be valid percent-encoded UTF-8',
  needsWrite: 'your access to this cluster is read-only',
  needsManage: "only the cluster's owner, or an owner or admin of its organization, may change it",
  otherCluster: "this token is a kubeconfig's: it may be used on that kubeconfig's cluster only",
} as const

/** Throws forbidden when `actor` signed in with a kubeconfig's token limited to a cluster other than `clusterId` (none: every non-cluster route). */
export function assertClusterLimit(actor: Actor | undefined, clusterId?: number): void {
  if (actor?.clusterLimit !== undefined && actor.clusterLimit !== clusterId) throw new AppError('forbidden', ClusterMessages.otherCluster)
}

/**
 * The cluster `ownerName/clusterName` as `me` may use it for `verb`. A cluster that does not exist
 * and one the caller may not use at all are the same 404; one they may use with less than the
 * verb needs is 403. Routes get it through `authorizeInCluster`; services that name a cluster in
 * a body or query (and whose route has its own token scope) ask it directly. Throws notFound, forbidden.
 */
export async function clusterScopeFor(
  facts: ClusterFacts,
  me: Actor,
  verb: ClusterVerb,
  ownerName: string,
  clusterName: string,
): Promise<ClusterScope> {
  const found = await facts.findCluster(me, ownerName, clusterName)
  const access = found && clusterAccess(found.relation)
  if (!found || !access) throw new AppError('notFound', ClusterMessages.notFound)
  assertClusterLimit(me, found.cluster.id)
  if (!accessAllows(access, ACCESS_NEEDED[verb]))
    throw new AppError('forbidden', verb === 'manage' ? ClusterMessages.needsManage : ClusterMessages.needsWrite)
  return { owner: found.owner, cluster: found.cluster, access, grantedTeams: found.relation.grantedTeams.map((team) => team.name) }
}

/**
 * Answers "may this caller do `verb` with the cluster of the `owner` and `cluster` params" and
 * loads it: the token scope first (it reveals nothing of any cluster), then clusterScopeFor.
 * Throws unauthenticated, forbidden, invalid (a name that did not decode), notFound.
 */
export async function authorizeInCluster(
  facts: ClusterFacts,
  actor: Actor | undefined,
  verb: ClusterVerb,
  params: RouteParams,
): Promise<{ me: Actor; cluster: ClusterScope }> {
  const me = signedInCaller(actor)
  assertTokenScope(me, verb === 'read' ? 'read' : 'write', 'cluster')
  // A router leaves a name whose percent-encoding is not UTF-8 undecoded (null): the client's mistake.
  if (typeof params.owner !== 'string' || typeof params.cluster !== 'string') throw new AppError('invalid', ClusterMessages.badName)
  return { me, cluster: await clusterScopeFor(facts, me, verb, params.owner, params.cluster) }
}
