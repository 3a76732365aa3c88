import { readFileSync } from 'node:fs'
import YAML from 'yaml'
import { auditConcerns } from '../audit/recorder'
import { type Actor, scopesAllow } from '../authz/actor'
import type { OrgScope } from '../authz/authorize'
import { accessAllows, type ClusterScope } from '../authz/clusters'
import { rfc3339 } from '../clock'
import { type Deps, runtimeSlot } from '../deps'
import { AppError } from '../errors'
import { checkName } from '../identity/names'
import { findAccountByName, type UserRow } from '../identity/store'
import { mintToken } from '../identity/tokens/service'
import { isDnsSubdomain } from '../kube'
import { EgressRefused } from '../net/egress'
import { orgsWhereRoleAtLeast } from '../orgs/grants'
import { AccessMessages, manageableOwner, resolveClusterByUid, usableClustersOf } from './access'
import { AgentMessages, agentTunnels, PENDING_UID_PREFIX } from './agent/tunnels'
import { type ClusterConnection, type ClusterCredential, checkConnection, connectionFromKubeconfig } from './connection'
import { callerOf, callMember, checkServerAddress, trustOwnMember } from './member/client'
import { inspectCluster, type StatusProbes } from './probe'
import type { ClusterInfo, ImportClusterOption, PatchClusterOption } from './schemas'
import * as store from './store'
import { StoreMessages } from './store'

export const Messages = {
  badName: 'cluster name must be 1-40 letters, digits, "-", "_" or "." (docs/decisions.md §1), not a reserved word',
  noConnection: 'give a kubeconfig, or server with a token or a client certificate and key',
  otherCluster: 'the new connection reaches another cluster (its kube-system uid differs): import it as a new cluster instead',
  notTeamCluster: "the cluster must belong to the team's organization",
  agentCluster: 'that cluster is connected through an agent: its connection comes from its agent (docs/agents.md), not from this request',
} as const

/** How long registration waits for each answer of the cluster (connect and read). */
const IMPORT_TIMEOUT_MS = 5_000

/**
 * Unsealed connections by registration id, reused while the stored row is unchanged (every seal
 * has a fresh IV, so a rotated credential never matches an old entry): the proxy's hot path
 * neither decrypts nor builds new TLS settings per request. `ofRows` holds the connection of each
 * row object already seen (the access cache hands out the same row until a commit).
 */
const CONNECTIONS = runtimeSlot('clusters.connections', () => ({
  byId: new Map<number, { row: string; connection: ClusterConnection }>(),
  ofRows: new WeakMap<store.ClusterRow, ClusterConnection>(),
}))
const rowKey = (c: store.ClusterRow) =>
  [c.server, c.caData, c.tlsServerName, String(c.insecureSkipTlsVerify), c.sealedCredential, String(c.agentTokenHash === null)].join(
    '\u0000',
  )

/** The live connection of a stored cluster, its credential unsealed. */
export async function connectionOf(deps: Deps, cluster: store.ClusterRow): Promise<ClusterConnection> {
  // An agent cluster whose agent never said hello has no connection yet.
  if (cluster.uid.startsWith(PENDING_UID_PREFIX))
    throw new AppError('unavailable', AgentMessages.noAgent(cluster.name, null), [], { 'retry-after': '5' })
  const connections = deps.runtimes.of(CONNECTIONS)
  const ofRow = connections.ofRows.get(cluster)
  if (ofRow) return ofRow
  const key = rowKey(cluster)
  const cached = connections.byId.get(cluster.id)
  if (cached?.row === key) {
    connections.ofRows.set(cluster, cached.connection)
    return cached.connection
  }
  const connection: ClusterConnection = {
    server: cluster.server,
    caData: cluster.caData,
    tlsServerName: cluster.tlsServerName,
    insecureSkipTlsVerify: cluster.insecureSkipTlsVerify,
    credential: JSON.parse(await deps.secrets.open(cluster.sealedCredential)) as ClusterCredential,
    ...(cluster.agentTokenHash === null ? {} : { agent: { clusterId: cluster.id, name: cluster.name } }),
  }
  connections.byId.set(cluster.id, { row: key, connection })
  connections.ofRows.set(cluster, connection)
  return connection
}

const connectionColumns = async (deps: Deps, connection: ClusterConnection) => ({
  server: connection.server,
  caData: connection.caData,
  tlsServerName: connection.tlsServerName,
  insecureSkipTlsVerify: connection.insecureSkipTlsVerify,
  sealedCredential: await deps.secrets.seal(JSON.stringify(connection.credential)),
})

const decodePem = (field: string, value: string): string => {
  const text = Buffer.from(value, 'base64').toString('utf8')
  if (!text.includes('-----BEGIN'))
    throw new AppError('invalid', `${field} must be base64 of a PEM block`, [{ field, message: 'is not base64 of a PEM block' }])
  return text
}

/** The connection an import or a rotation names: a kubeconfig, or the explicit fields; undefined when it names none. Throws invalid. */
function connectionFromInput(input: PatchClusterOption): ClusterConnection | undefined {
  if (input.kubeconfig !== undefined) return connectionFromKubeconfig(input.kubeconfig, input.context)
  if (input.server === undefined && input.token === undefined && input.clientCertificate === undefined) return undefined
  let credential: ClusterCredential
  if (input.token) credential = { token: input.token }
  else if (input.clientCertificate && input.clientKey)
    credential = {
      clientCertificate: decodePem('clientCertificate', input.clientCertificate),
      clientKey: decodePem('clientKey', input.clientKey),
    }
  else
    throw new AppError('invalid', Messages.noConnection, [{ field: 'token', message: 'or clientCertificate and clientKey are required' }])
  return checkConnection({
    server: input.server ?? '',
    caData: input.caData ? decodePem('caData', input.caData) : '',
    tlsServerName: input.tlsServerName ?? '',
    insecureSkipTlsVerify: input.insecureSkipTLSVerify ?? false,
    credential,
  })
}

/** Checks the server address with the egress guard, then asks the cluster who it is. Throws invalid. */
async function checkedIdentity(deps: Deps, name: string, connection: ClusterConnection) {
  try {
    await checkServerAddress(deps, connection)
  } catch (error) {
    if (error instanceof EgressRefused)
      throw new AppError('invalid', `server is not allowed: ${error.message}`, [{ field: 'server', message: error.message }])
    throw error
  }
  return inspectCluster(deps, { name, connection }, IMPORT_TIMEOUT_MS)
}

/** The owner a registration named `name` is for: one the caller manages, the name valid. Throws notFound, invalid. */
export async function ownerOfNewCluster(deps: Deps, actor: Actor, ownerName: string, name: string): Promise<UserRow> {
  const owner = await manageableOwner(deps, actor, ownerName)
  if (checkName(name) !== 'VALID') throw new AppError('invalid', Messages.badName, [{ field: 'name', message: 'is not a valid name' }])
  auditConcerns({ cluster: `${owner.name}/${name}` })
  return owner
}

/**
 * Registers a cluster for an owner the caller manages, after connecting to it (/version, nodes,
 * the kube-system uid, which becomes the cluster's uid). Throws notFound (owner), invalid (name,
 * connection, the cluster's refusal), conflict (name or cluster already registered for the owner).
 */
export async function importCluster(
  deps: Deps,
  probes: StatusProbes,
  actor: Actor,
  ownerName: string,
  input: ImportClusterOption,
): Promise<ClusterInfo> {
  const owner = await ownerOfNewCluster(deps, actor, ownerName, input.name)
  const connection = connectionFromInput(input)
  if (!connection)
    throw new AppError('invalid', Messages.noConnection, [{ field: 'kubeconfig', message: 'or server and a credential are required' }])
  // Checked before connecting: a taken name needs no trip to the cluster (the index still decides races).
  if (await store.findClusterOfOwner(deps.db.read, owner.id, input.name))
    throw new AppError('conflict', StoreMessages.nameTaken, [{ field: 'name', message: 'is already used' }])
  const identity = await checkedIdentity(deps, input.name, connection)
  const row = await deps.db.write(async (tx) =>
    store.insertCluster(tx, {
      uid: identity.uid,
      ownerId: owner.id,
      name: input.name,
      lowerName: input.name.toLowerCase(),
      displayName: input.displayName ?? '',
      impersonate: input.impersonate ?? false,
      ...(await connectionColumns(deps, connection)),
    }),
  )
  return describeCluster(deps, probes, { ...row, ownerName: owner.name })
}

/**
 * Registers the built-in emulator as `owner`'s cluster `sandbox`, or points the existing
 * registration at this run's emulator (its URL, CA and token change on every start; its
 * kube-system uid is kept, so the registration's uid stays the cluster's).
 */
export async function registerSandbox(deps: Deps, owner: UserRow, connection: ClusterConnection): Promise<void> {
  const checked = checkConnection(connection)
  // The platform's own emulator on loopback: reached whatever PLATFORM_ALLOW_PRIVATE_ENDPOINTS says.
  await trustOwnMember(deps, checked)
  const identity = await inspectCluster(deps, { name: 'sandbox', connection: checked }, IMPORT_TIMEOUT_MS)
  const existing = await store.findClusterOfOwner(deps.db.read, owner.id, 'sandbox')
  const columns = await connectionColumns(deps, checked)
  await deps.db.write(async (tx) =>
    existing
      ? store.updateCluster(tx, existing.id, { ...columns, uid: identity.uid })
      : store.insertCluster(tx, {
          uid: identity.uid,
          ownerId: owner.id,
          name: 'sandbox',
          lowerName: 'sandbox',
          displayName: 'Sandbox',
          provider: 'Sandbox',
          vendor: 'platform-api emulator',
          ...columns,
        }),
  )
}

/** The sandbox registration's uid, if there is one: the emulator keeps it as its kube-system uid. */
export async function sandboxUid(deps: Deps, owner: UserRow): Promise<string | undefined> {
  return (await store.findClusterOfOwner(deps.db.read, owner.id, 'sandbox'))?.uid
}

/**
 * The caller's clusters, oldest first; with `includeShared`, also those of organizations they own
 * or administer and those granted to their teams.
 */
export async function listMyClusters(deps: Deps, probes: StatusProbes, actor: Actor, includeShared: boolean): Promise<ClusterInfo[]> {
  const orgIds = includeShared ? (await orgsWhereRoleAtLeast(deps.db.read, actor.user.id, 'admin')).map((o) => o.id) : []
  const rows = await store.listClustersOfOwners(deps.db.read, [actor.user.id, ...orgIds])
  const granted = includeShared ? await store.listClustersGrantedTo(deps.db.read, actor.user.id) : []
  const seen = new Set(rows.map((r) => r.id))
  return describeAll(deps, probes, [...rows, ...granted.filter((r) => !seen.has(r.id))])
}

/** Every registered cluster, or `ownerName`'s (the command line's view). Throws notFound. */
export async function listAllClusters(deps: Deps, probes: StatusProbes, ownerName?: string): Promise<ClusterInfo[]> {
  const owner = ownerName === undefined ? undefined : await findAccountByName(deps.db.read, ownerName)
  if (ownerName !== undefined && !owner) throw new AppError('notFound', AccessMessages.ownerNotFound)
  return describeAll(deps, probes, await store.listClusters(deps.db.read, owner?.id))
}

/** The clusters of `ownerName` the caller may use. Throws notFound. */
export async function listOwnerClusters(deps: Deps, probes: StatusProbes, actor: Actor, ownerName: string): Promise<ClusterInfo[]> {
  return describeAll(deps, probes, await usableClustersOf(deps, actor, ownerName))
}

/** The admitted cluster as ClusterInfo. */
export function getCluster(deps: Deps, probes: StatusProbes, { cluster, owner }: ClusterScope): Promise<ClusterInfo> {
  return describeCluster(deps, probes, { ...cluster, ownerName: owner.name })
}

/**
 * Renames the display name, turns impersonation on or off, or rotates the connection; a new
 * connection is checked against the cluster and must reach the same cluster (uid). Throws
 * notFound, invalid.
 */
export async function patchCluster(
  deps: Deps,
  probes: StatusProbes,
  { cluster, owner }: ClusterScope,
  input: PatchClusterOption,
): Promise<ClusterInfo> {
  const connection = connectionFromInput(input)
  if (connection && cluster.agentTokenHash !== null)
    throw new AppError('conflict', Messages.agentCluster, [{ field: 'server', message: 'is reported by the agent' }])
  if (connection && (await checkedIdentity(deps, cluster.name, connection)).uid !== cluster.uid)
    throw new AppError('invalid', Messages.otherCluster, [{ field: 'server', message: 'reaches another cluster' }])
  const row = await deps.db.write(async (tx) =>
    store.updateCluster(tx, cluster.id, {
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
      ...(input.impersonate !== undefined ? { impersonate: input.impersonate } : {}),
      ...(connection ? await connectionColumns(deps, connection) : {}),
    }),
  )
  if (!row) throw new AppError('notFound', AccessMessages.notFound)
  if (connection) probes.forget(row.id)
  return describeCluster(deps, probes, { ...row, ownerName: owner.name })
}

/** Forgets the registration and its credentials; nothing is done to the cluster. */
export async function removeCluster(deps: Deps, probes: StatusProbes, { cluster }: ClusterScope): Promise<void> {
  await deps.db.write((tx) => store.deleteCluster(tx, cluster.id))
  probes.forget(cluster.id)
  agentTunnels(deps).forgetCluster(cluster.id)
}

/** The name of the token of a user's kubeconfig of `owner/cluster` at one access level: one of each at a time. */
const kubeconfigTokenName = (owner: string, cluster: string, readonly: boolean) =>
  `kubeconfig-${owner}-${cluster}${readonly ? '-readonly' : ''}`

/**
 * A kubeconfig reaching the cluster through the platform's native passthrough, with a new access
 * token of the caller (write:cluster, or read:cluster when `readonly`), shown only here, limited to
 * this cluster and replacing the token of the caller's previous kubeconfig of it at that level. Its token
 * never holds more than the caller's own credential nor their access to the cluster: a caller who
 * may only read (a read team, a read:cluster token) must ask for a read-only one, and is refused
 * rather than handed one silently, so a kubeconfig never fails later for a reason it did not say.
 * Throws forbidden.
 */
export async function kubeconfigFor(
  deps: Deps,
  actor: Actor,
  { cluster, owner, access }: ClusterScope,
  readonly: boolean,
): Promise<string> {
  if (!readonly && !accessAllows(access, 'write')) throw new AppError('forbidden', AccessMessages.needsWrite)
  if (!readonly && !scopesAllow(actor.scopes, 'write', 'cluster')) throw new AppError('forbidden', KubeconfigMessages.readOnlyCredential)
  const { plaintext } = await mintToken(deps.db, actor.user.id, {
    name: kubeconfigTokenName(owner.name, cluster.name, readonly),
    scopes: [readonly ? 'read:cluster' : 'write:cluster'],
    kubeconfigClusterId: cluster.id,
  })
  const contextName = `${owner.name}-${cluster.name}`
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: contextName,
        cluster: { server: `${deps.config.publicUrl}/api/v1/clusters/${owner.name}/${cluster.name}/k8s`, ...platformCa(deps) },
      },
    ],
    users: [{ name: `${actor.user.name}@${contextName}`, user: { token: plaintext } }],
    contexts: [{ name: contextName, context: { cluster: contextName, user: `${actor.user.name}@${contextName}` } }],
    'current-context': contextName,
  })
}

export const KubeconfigMessages = {
  readOnlyCredential:
    'a read-only credential gets a read-only kubeconfig: ask with ?readonly=true, or sign in with a credential that may write to clusters',
} as const

/** When the platform serves TLS itself: the CA kubectl must trust (the configured CA, else the certificate). */
function platformCa(deps: Deps): { 'certificate-authority-data'?: string } {
  const tls = deps.config.tls
  return tls ? { 'certificate-authority-data': readFileSync(tls.caFile ?? tls.certFile).toString('base64') } : {}
}

/** Clusters granted to the team of `scope`. */
export async function listTeamClusters(deps: Deps, probes: StatusProbes, scope: OrgScope): Promise<ClusterInfo[]> {
  return describeAll(deps, probes, await store.listTeamClusters(deps.db.read, scope.team!.id))
}

/** The teams granted the cluster of `scope` (none for a user's cluster): who else uses it, for anyone who may see it. */
export function listClusterTeams(deps: Deps, { cluster }: ClusterScope) {
  return store.teamsGranted(deps.db.read, cluster)
}

async function teamCluster(deps: Deps, scope: OrgScope, name: string): Promise<store.ClusterRow> {
  const cluster = await store.findClusterOfOwner(deps.db.read, scope.org.id, name)
  if (!cluster) throw new AppError('notFound', Messages.notTeamCluster)
  return cluster
}

/** Grants a cluster of the team's org to the team (idempotent). Throws notFound. */
export async function grantTeamCluster(deps: Deps, scope: OrgScope, name: string): Promise<void> {
  const cluster = await teamCluster(deps, scope, name)
  await deps.db.write((tx) => store.grantCluster(tx, scope.team!.id, cluster.id))
}

/** Takes a cluster away from the team (idempotent). Throws notFound. */
export async function revokeTeamCluster(deps: Deps, scope: OrgScope, name: string): Promise<void> {
  const cluster = await teamCluster(deps, scope, name)
  await deps.db.write((tx) => store.revokeCluster(tx, scope.team!.id, cluster.id))
}

const describeAll = (deps: Deps, probes: StatusProbes, rows: store.ClusterWithOwner[]) =>
  Promise.all(rows.map((row) => describeCluster(deps, probes, row)))

/** The registration as ClusterInfo, with its health (and for an agent cluster, its agents: Active only while one is connected). */
export async function describeCluster(deps: Deps, probes: StatusProbes, row: store.ClusterWithOwner): Promise<ClusterInfo> {
  const agent = row.agentTokenHash === null ? undefined : await agentTunnels(deps).statusOf(row)
  // A status probed before the agent (re)connected, or before its first hello gave the cluster its uid, is stale.
  const live = await probes.statusOf(row.id, row.name, () => connectionOf(deps, row), `${agent?.since ?? ''} ${row.uid}`)
  const status =
    agent && !agent.connected
      ? { ...noAgentStatus(row, live.status.lastProbeTime), agent }
      : { ...live.status, ...(agent ? { agent } : {}) }
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
    createdAt: rfc3339(row.createdAt),
    age: kubectlAge(deps.clock.now() - row.createdAt.getTime()),
    status,
  }
}

const noAgentStatus = (row: store.ClusterRow, lastProbeTime: string) => ({
  phase: 'NotReady' as const,
  message: AgentMessages.noAgent(row.name, row.agentLastSeen?.getTime()),
  lastProbeTime,
})

/** Ages the way kubectl prints them: 45s, 12m, 5h, 3d, 2y. */
function kubectlAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 120) return `${s}s`
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`
  if (s < 2 * 86400) return `${Math.floor(s / 3600)}h`
  if (s < 2 * 365 * 86400) return `${Math.floor(s / 86400)}d`
  return `${Math.floor(s / (365 * 86400))}y`
}

/**
 * The data of Secret `namespace/name` (decoded) in the caller's cluster with `uid` (read access
 * suffices). Throws notFound (cluster or Secret), upstream.
 */
export async function readSecretOfCluster(
  deps: Deps,
  actor: Actor,
  uid: string,
  namespace: string,
  name: string,
): Promise<Record<string, string>> {
  const cluster = await resolveClusterByUid(deps, actor, uid, 'read')
  if (!isDnsSubdomain(namespace) || !isDnsSubdomain(name)) throw new AppError('notFound', 'secret not found')
  const connection = await connectionOf(deps, cluster)
  const answer = await callMember(
    deps,
    { name: cluster.name, connection },
    {
      path: `/api/v1/namespaces/${namespace}/secrets/${name}`,
      headers: { accept: 'application/json' },
      caller: callerOf(actor),
    },
  )
  if (answer.status === 404) throw new AppError('notFound', `secret ${namespace}/${name} not found in cluster "${cluster.name}"`)
  if (answer.status < 200 || answer.status >= 300)
    throw new AppError('upstream', `cluster "${cluster.name}" answered ${answer.status} for secret ${namespace}/${name}`)
  const secret = (await new Response(answer.body).json().catch(() => ({}))) as { data?: Record<string, string> }
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]))
}
