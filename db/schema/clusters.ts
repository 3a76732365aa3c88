import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'
import { teams } from './orgs'

/**
 * Member clusters. `uid` is the cluster's identity (its kube-system namespace uid): one owner
 * cannot register the same cluster twice, but two owners may each register it. The connection is the few kubeconfig fields decisions §3 allows; the credential
 * (bearer token or client certificate and key) is sealed with the data key and never returned.
 */
export const clusters = sqliteTable(
  'clusters',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: text('uid').notNull(),
    /** The owning user or organization. */
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    displayName: text('display_name').notNull().default(''),
    provider: text('provider').notNull().default('Generic'),
    vendor: text('vendor').notNull().default(''),
    location: text('location').notNull().default(''),
    hubClusterName: text('hub_cluster_name').notNull().default(''),
    clusterSetName: text('cluster_set_name').notNull().default(''),
    isMonitoringCluster: integer('is_monitoring_cluster', { mode: 'boolean' }).notNull().default(false),
    server: text('server').notNull(),
    /** PEM of the CA that signs the API server's certificate; '' = the system roots. */
    caData: text('ca_data').notNull().default(''),
    tlsServerName: text('tls_server_name').notNull().default(''),
    insecureSkipTlsVerify: integer('insecure_skip_tls_verify', { mode: 'boolean' }).notNull().default(false),
    /** Sealed JSON: `{"token": …}` or `{"clientCertificate": …, "clientKey": …}`. */
    sealedCredential: text('sealed_credential').notNull(),
    /** Send Impersonate-User/Group of the caller (decisions §3); off by default. */
    impersonate: integer('impersonate', { mode: 'boolean' }).notNull().default(false),
    /**
     * An agent cluster's agent token, as a SHA-256 hex digest (docs/agents.md); null for an imported
     * cluster. Until its agent first connects, `uid` is `pending-…` and the connection columns are empty.
     */
    agentTokenHash: text('agent_token_hash'),
    /** When an agent of this cluster was last heard, by any process (ms). */
    agentLastSeen: integer('agent_last_seen', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [
    uniqueIndex('clusters_owner_uid').on(t.ownerId, t.uid),
    uniqueIndex('clusters_owner_name').on(t.ownerId, t.lowerName),
    index('clusters_uid').on(t.uid),
    uniqueIndex('clusters_agent_token').on(t.agentTokenHash),
  ],
)

/** Clusters of an org granted to one of its teams (Gitea's team repositories, for clusters). */
export const teamClusters = sqliteTable(
  'team_clusters',
  {
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    clusterId: integer('cluster_id')
      .notNull()
      .references(() => clusters.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.clusterId] }), index('team_clusters_cluster').on(t.clusterId)],
)

/**
 * The agents of agent clusters connected now (docs/agents.md): one row per tunnel, held by one
 * platform process, which other processes reach at `peerAddress` to use it. The holder refreshes
 * `lastSeen` while the tunnel lives and deletes the row when it ends; a row not refreshed for
 * twice the refresh interval belongs to a process that died and counts as gone.
 */
export const agentTunnels = sqliteTable(
  'agent_tunnels',
  {
    id: text('id').primaryKey(),
    clusterId: integer('cluster_id')
      .notNull()
      .references(() => clusters.id, { onDelete: 'cascade' }),
    /** host:port of the holding process's peer listener. */
    peerAddress: text('peer_address').notNull(),
    /** The agent's own version, as it reported it. */
    agentVersion: text('agent_version').notNull().default(''),
    /** The address the agent connected from. */
    sourceAddress: text('source_address').notNull().default(''),
    connectedAt: integer('connected_at', { mode: 'timestamp_ms' }).notNull(),
    lastSeen: integer('last_seen', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('agent_tunnels_cluster').on(t.clusterId)],
)
