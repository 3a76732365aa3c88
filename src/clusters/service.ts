import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { AppError } from '../http/errors'
import { isDnsSubdomain } from '../kube'
import type { UserRow } from '../identity/store'
import { orgIdsAdministeredBy } from '../orgs/store'
import { memberFetch, memberJson } from './client'
import { checkConnection, type ClusterConnection, type ClusterCredential } from './connection'
import type { ClusterInfo } from './schemas'
import * as store from './store'

/** How long a listing waits for each cluster's live version and node count. */
const STATUS_TIMEOUT_MS = 3000

export interface ClusterRegistration {
  name: string
  displayName?: string
  provider?: string
  vendor?: string
  location?: string
  connection: ClusterConnection
}

/** The live connection of a stored cluster, its credential unsealed. */
export async function connectionOf(deps: Deps, cluster: store.ClusterRow): Promise<ClusterConnection> {
  return {
    server: cluster.server,
    caData: cluster.caData,
    tlsServerName: cluster.tlsServerName,
    insecureSkipTlsVerify: cluster.insecureSkipTlsVerify,
    credential: JSON.parse(await deps.secrets.open(cluster.sealedCredential)) as ClusterCredential,
  }
}

const connectionColumns = async (deps: Deps, connection: ClusterConnection) => ({
  server: connection.server,
  caData: connection.caData,
  tlsServerName: connection.tlsServerName,
  insecureSkipTlsVerify: connection.insecureSkipTlsVerify,
  sealedCredential: await deps.secrets.seal(JSON.stringify(connection.credential)),
})

/** Registers a cluster for `owner`. Throws invalid (name, connection) or duplicate (name taken). */
export async function registerCluster(deps: Deps, owner: UserRow, registration: ClusterRegistration): Promise<store.ClusterRow> {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(registration.name))
    throw new AppError('invalid', 'cluster name must be a DNS label: lowercase letters, digits and "-", at most 63', [{ field: 'name', message: 'not a DNS label' }])
  const columns = await connectionColumns(deps, checkConnection(registration.connection))
  return deps.db.write((tx) => store.insertCluster(tx, {
    uid: crypto.randomUUID(),
    ownerId: owner.id,
    name: registration.name,
    lowerName: registration.name,
    displayName: registration.displayName ?? '',
    provider: registration.provider ?? 'Generic',
    vendor: registration.vendor ?? '',
    location: registration.location ?? '',
    ...columns,
  }))
}

/**
 * Registers the built-in emulator as `owner`'s cluster `sandbox`, or points the existing
 * registration at this run's emulator (its URL, CA and token change on every start).
 */
export async function registerSandbox(deps: Deps, owner: UserRow, connection: ClusterConnection): Promise<void> {
  const existing = await store.findClusterOfOwner(deps.db.read, owner.id, 'sandbox')
  if (!existing) {
    await registerCluster(deps, owner, { name: 'sandbox', displayName: 'Sandbox', provider: 'Sandbox', vendor: 'platform-api emulator', connection })
    return
  }
  const columns = await connectionColumns(deps, checkConnection(connection))
  await deps.db.write((tx) => store.updateClusterConnection(tx, existing.id, columns))
}

/**
 * The clusters `user` owns, oldest first, each with its live version, node count and status;
 * with `includeOrgs`, also the clusters of organizations the user owns or administers.
 */
export async function listClusters(deps: Deps, user: UserRow, includeOrgs: boolean): Promise<ClusterInfo[]> {
  const orgIds = includeOrgs ? await orgIdsAdministeredBy(deps.db.read, user.id) : []
  const rows = await store.listClustersOfOwners(deps.db.read, [user.id, ...orgIds])
  return Promise.all(rows.map((row) => describeCluster(deps, row)))
}

async function describeCluster(deps: Deps, row: store.ClusterWithOwner): Promise<ClusterInfo> {
  const live = await liveStatus(deps, row)
  return {
    id: row.id,
    displayName: row.displayName || row.name,
    name: row.name,
    uid: row.uid,
    ownerID: row.ownerId,
    ownerName: row.ownerName,
    provider: row.provider,
    vendor: row.vendor,
    kubernetesVersion: live.kubernetesVersion,
    nodeCount: live.nodeCount,
    endpoint: row.server,
    location: row.location,
    hubClusterName: row.hubClusterName,
    clusterSetName: row.clusterSetName,
    isMonitoringCluster: row.isMonitoringCluster,
    createdAt: row.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    age: kubectlAge(Date.now() - row.createdAt.getTime()),
    status: live.status,
  }
}

async function liveStatus(deps: Deps, row: store.ClusterRow): Promise<Pick<ClusterInfo, 'kubernetesVersion' | 'nodeCount' | 'status'>> {
  try {
    const connection = await connectionOf(deps, row)
    const [version, nodeCount] = await Promise.all([
      memberJson<{ gitVersion?: string }>(row.name, connection, '/version', STATUS_TIMEOUT_MS),
      countNodes(row.name, connection),
    ])
    return { kubernetesVersion: version.gitVersion ?? '', nodeCount, status: { phase: 'Active' } }
  } catch (error) {
    const message = error instanceof AppError ? error.message : 'the cluster could not be asked'
    return { kubernetesVersion: '', nodeCount: 0, status: { phase: 'Unreachable', message } }
  }
}

interface NodeList { items?: unknown[]; metadata?: { remainingItemCount?: number; continue?: string } }

/**
 * Counts nodes without fetching them all: a one-item page carries `remainingItemCount`. A
 * server that leaves it out while more pages follow is asked for the whole list.
 */
async function countNodes(clusterName: string, connection: ClusterConnection): Promise<number> {
  const page = await memberJson<NodeList>(clusterName, connection, '/api/v1/nodes?limit=1', STATUS_TIMEOUT_MS)
  const shown = page.items?.length ?? 0
  if (page.metadata?.remainingItemCount !== undefined) return shown + page.metadata.remainingItemCount
  if (!page.metadata?.continue) return shown
  const all = await memberJson<NodeList>(clusterName, connection, '/api/v1/nodes', STATUS_TIMEOUT_MS)
  return all.items?.length ?? 0
}

/** Ages the way kubectl prints them: 45s, 12m, 5h, 3d, 2y. */
export function kubectlAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 120) return `${s}s`
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`
  if (s < 2 * 86400) return `${Math.floor(s / 3600)}h`
  if (s < 2 * 365 * 86400) return `${Math.floor(s / 86400)}d`
  return `${Math.floor(s / (365 * 86400))}y`
}

/**
 * The data of Secret `namespace/name` (decoded) in the cluster with `uid` that `user` can use (owns,
 * or owns or administers through an org). Throws notFound (cluster or Secret), upstream.
 */
export async function readSecretOfCluster(deps: Deps, actor: Actor, uid: string, namespace: string, name: string): Promise<Record<string, string>> {
  const orgIds = await orgIdsAdministeredBy(deps.db.read, actor.user.id)
  const cluster = (await store.listClustersOfOwners(deps.db.read, [actor.user.id, ...orgIds])).find((row) => row.uid === uid)
  if (!cluster) throw new AppError('notFound', 'cluster not found')
  if (!isDnsSubdomain(namespace) || !isDnsSubdomain(name)) throw new AppError('notFound', 'secret not found')
  const connection = await connectionOf(deps, cluster)
  const res = await memberFetch(cluster.name, connection, { path: `/api/v1/namespaces/${namespace}/secrets/${name}`, headers: { accept: 'application/json' } })
  if (res.status === 404) throw new AppError('notFound', `secret ${namespace}/${name} not found in cluster "${cluster.name}"`)
  if (!res.ok) throw new AppError('upstream', `cluster "${cluster.name}" answered ${res.status} for secret ${namespace}/${name}`)
  const secret = (await res.json().catch(() => ({}))) as { data?: Record<string, string> }
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]))
}
