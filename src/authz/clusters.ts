import type { OrgRole } from './permissions'

/**
 * Who may use a member cluster (docs/decisions.md §3, §3a), as one table. `manage`: register, change,
 * remove and grant it, and every verb through the proxy; `write`: every verb through the proxy
 * (exec included); `read`: get, list, watch, logs and metrics only. No access at all is 404.
 */
export type ClusterAccess = 'read' | 'write' | 'manage'

export interface ClusterFacts {
  siteAdmin: boolean
  /** The caller is the owning user. */
  ownsCluster: boolean
  /** The caller's role in the owning organization; undefined for a user-owned cluster or a non-member. */
  orgRole: OrgRole | undefined
  /** Permissions (`read`, `write`, `admin`, `owner`) of the caller's teams that were granted this cluster. */
  grantedTeamPermissions: readonly string[]
}

const RANK: Record<ClusterAccess, number> = { read: 1, write: 2, manage: 3 }

/** The table: owner user, site admins, org owners and admins manage; granted teams read or write by their permission. */
export function clusterAccess(facts: ClusterFacts): ClusterAccess | undefined {
  if (facts.siteAdmin || facts.ownsCluster || facts.orgRole === 'owner' || facts.orgRole === 'admin') return 'manage'
  if (facts.grantedTeamPermissions.some((p) => p === 'write' || p === 'admin' || p === 'owner')) return 'write'
  if (facts.grantedTeamPermissions.includes('read')) return 'read'
  return undefined
}

/** True when `held` is at least `needed`. */
export const accessAllows = (held: ClusterAccess, needed: ClusterAccess): boolean => RANK[held] >= RANK[needed]

/** The access a proxied request needs: safe methods read, everything else (and exec, even over GET) writes. */
export function accessForRequest(method: string, isExec: boolean): ClusterAccess {
  return !isExec && (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') ? 'read' : 'write'
}
