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
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [
    uniqueIndex('clusters_owner_uid').on(t.ownerId, t.uid),
    uniqueIndex('clusters_owner_name').on(t.ownerId, t.lowerName),
    index('clusters_uid').on(t.uid),
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
