import type { Actor } from '../authz/actor'
import { authorizeInOrg } from '../authz/authorize'
import { rfc3339 } from '../clock'
import { listClusters } from '../clusters/store'
import type { Deps } from '../deps'
import type { UserRow } from '../identity/store'
import { orgsWhereRoleAtLeast } from '../orgs/grants'
import { monthKeyAt } from './calendar'
import { objectMonthsAt } from './service'
import * as store from './store'
import { usageOf } from './views'

/**
 * DBaaS namespace billing reports (spec; docs/decisions.md §5): with `org`, the org's usage and the caller
 * must own it (403 otherwise); without, the caller's own clusters, within orgs the caller owns, so
 * nobody sees an org's usage without owning it.
 */

/** Objects deleted longer ago than this are left out of the reports. */
const RETENTION_MS = 183 * 86_400_000

interface ReportScope {
  orgs: UserRow[]
  /** Only these clusters (undefined: every cluster of the orgs). */
  clusterUids: string[] | undefined
}

async function scopeOf(deps: Deps, me: Actor, org: string | undefined): Promise<ReportScope> {
  if (org !== undefined) return { orgs: [(await authorizeInOrg(deps, me, 'org-owner', { org })).scope.org], clusterUids: undefined }
  const db = deps.db.read
  return { orgs: await orgsWhereRoleAtLeast(db, me.user.id, 'owner'), clusterUids: (await listClusters(db, me.user.id)).map((c) => c.uid) }
}

async function objectsInScope(deps: Deps, scope: ReportScope, filter: store.ObjectFilter, now: number) {
  const result: { org: UserRow; object: store.ObjectRow }[] = []
  for (const org of scope.orgs) {
    for (const object of await store.objectsOf(deps.db.read, org.id, { ...filter, clusterUids: scope.clusterUids })) {
      if (object.deletedAt !== null && object.deletedAt < now - RETENTION_MS) continue
      result.push({ org, object })
    }
  }
  return result
}

async function currentUsage(deps: Deps, org: UserRow, object: store.ObjectRow, now: number) {
  const month = monthKeyAt(now)
  return usageOf(await objectMonthsAt(deps.db.read, org.id, month, month, { objectUid: object.uid }, now), 'total')
}

const iso = (ms: number | null) => (ms === null ? null : rfc3339(ms))

/** GET /dbaas/billing/reports/namespaces: every namespace with usage in scope, this month's usage. */
export async function namespacesReport(deps: Deps, me: Actor, org: string | undefined, now = deps.clock.now()) {
  const scope = await scopeOf(deps, me, org)
  const byNamespace = new Map<string, { org: UserRow; objects: store.ObjectRow[] }>()
  for (const { org: o, object } of await objectsInScope(deps, scope, {}, now)) {
    const key = `${o.id}\u0000${object.clusterUid}\u0000${object.namespaceUid}`
    const entry = byNamespace.get(key) ?? { org: o, objects: [] }
    entry.objects.push(object)
    byNamespace.set(key, entry)
  }
  const month = monthKeyAt(now)
  const namespaces = []
  for (const { org: o, objects } of byNamespace.values()) {
    const first = objects[0]!
    const rows = await objectMonthsAt(
      deps.db.read,
      o.id,
      month,
      month,
      { clusterUid: first.clusterUid, namespaceUid: first.namespaceUid },
      now,
    )
    namespaces.push({
      org: o.name,
      clusterUID: first.clusterUid,
      clusterName: first.clusterName,
      namespace: first.namespace,
      namespaceUID: first.namespaceUid,
      databases: objects.length,
      firstSeen: iso(Math.min(...objects.map((x) => x.firstAt))),
      lastSeen: iso(Math.max(...objects.map((x) => x.lastAt))),
      currentMonth: usageOf(rows, 'total'),
    })
  }
  return { org: org ?? null, namespaces }
}

/** GET /dbaas/billing/reports/clusters/{clusterID}/namespaces/{namespaceName}: one namespace's databases. */
export async function namespaceReport(
  deps: Deps,
  me: Actor,
  clusterID: string,
  namespaceName: string,
  org: string | undefined,
  now = deps.clock.now(),
) {
  const scope = await scopeOf(deps, me, org)
  const found = await objectsInScope(deps, scope, { clusterUid: clusterID, namespace: namespaceName }, now)
  const databases = []
  for (const { org: o, object } of found) {
    databases.push({
      org: o.name,
      databaseInfo: { product: object.product, group: object.apiGroup, kind: object.kind, name: object.name, uid: object.uid },
      resources: { cpuCores: object.lastCpuMillis === null ? null : object.lastCpuMillis / 1000, memoryBytes: object.lastMemoryBytes },
      created: iso(object.firstAt),
      lastSeen: iso(object.lastAt),
      deleted: iso(object.deletedAt),
      currentMonth: await currentUsage(deps, o, object, now),
    })
  }
  const first = found[0]?.object
  return {
    clusterInfo: { uid: clusterID, name: first?.clusterName ?? null },
    namespaceInfo: {
      name: namespaceName,
      uid: first?.namespaceUid ?? null,
      firstSeen: first ? iso(Math.min(...found.map((f) => f.object.firstAt))) : null,
    },
    databases,
  }
}
