import { t } from 'elysia'

export const ClusterInfo = t.Object(
  {
    id: t.Integer({ description: 'Cluster id' }),
    displayName: t.String({ description: 'Name shown to people; the name when not set' }),
    name: t.String({ description: 'Cluster name, unique per owner; the {cluster} of proxy paths' }),
    uid: t.String({ description: 'Stable unique id of the registration' }),
    ownerID: t.Integer({ description: 'Id of the owning user or organization' }),
    ownerName: t.String({ description: 'Name of the owning user or organization; the {owner} of proxy paths' }),
    provider: t.String({ description: 'Where the cluster runs, e.g. Generic or Sandbox' }),
    vendor: t.String({ description: 'Kubernetes distribution vendor, when known' }),
    kubernetesVersion: t.String({ description: 'gitVersion reported by the API server; empty when unreachable' }),
    nodeCount: t.Integer({ description: 'Nodes reported by the API server; 0 when unreachable' }),
    endpoint: t.String({ description: 'API server URL' }),
    location: t.String({ description: 'Free-text location' }),
    hubClusterName: t.String({ description: 'Hub cluster of a cluster set, when any' }),
    clusterSetName: t.String({ description: 'Cluster set the cluster belongs to, when any' }),
    isMonitoringCluster: t.Boolean({ description: 'Whether this cluster hosts the monitoring stack' }),
    createdAt: t.String({ format: 'date-time', description: 'When the cluster was registered' }),
    age: t.String({ description: 'Time since registration, kubectl style (e.g. 5d, 3h, 42m)' }),
    status: t.Object(
      {
        phase: t.Union([t.Literal('Active'), t.Literal('NotReady'), t.Literal('Unknown')], {
          description: 'Active: the API server answered the last probe; NotReady: it did not; Unknown: no probe has finished yet',
        }),
        message: t.Optional(t.String({ description: 'Why it is not ready' })),
        lastProbeTime: t.String({ description: 'When the last finished probe ran (RFC 3339); empty before the first' }),
        agent: t.Optional(
          t.Object(
            {
              connected: t.Boolean({ description: 'Whether an agent of this cluster holds a tunnel to the platform now' }),
              since: t.Optional(t.String({ format: 'date-time', description: 'When the oldest connected agent connected' })),
              lastSeen: t.Optional(t.String({ format: 'date-time', description: 'When an agent was last heard' })),
              version: t.Optional(t.String({ description: 'The connected agent’s version' })),
              address: t.Optional(t.String({ description: 'The address the connected agent dialled from' })),
            },
            { description: 'Agent clusters only (docs/agents.md): the agents that reach the cluster for the platform' },
          ),
        ),
      },
      { additionalProperties: true, description: 'Kubernetes-style status from a health probe cached for 30 s (2 s timeout)' },
    ),
  },
  { title: 'ClusterInfo' },
)
export type ClusterInfo = typeof ClusterInfo.static

export const ClusterListQuery = t.Object({
  all: t.Optional(
    t.String({ description: '"true": also clusters of organizations the caller owns or administers, and clusters granted to their teams' }),
  ),
})

const pem = (description: string) =>
  t.Optional(t.String({ maxLength: 65536, description: `${description}, base64 of PEM as in a kubeconfig's *-data field` }))

/** The connection fields of an import or a credential rotation: a kubeconfig, or the explicit fields. */
const connectionFields = {
  kubeconfig: t.Optional(
    t.String({ maxLength: 1048576, description: 'A kubeconfig (YAML or JSON); exec, auth-provider and file paths are refused' }),
  ),
  context: t.Optional(t.String({ maxLength: 253, description: 'The kubeconfig context to use; its current-context by default' })),
  server: t.Optional(t.String({ maxLength: 2048, description: 'API server URL (explicit fields instead of a kubeconfig)' })),
  caData: pem('Certificate authority of the API server; the system roots when empty'),
  token: t.Optional(t.String({ maxLength: 16384, description: 'Bearer token; write-only' })),
  clientCertificate: pem('Client certificate'),
  clientKey: pem('Client key; write-only'),
  tlsServerName: t.Optional(t.String({ maxLength: 253, description: 'Name to check the API server certificate against' })),
  insecureSkipTLSVerify: t.Optional(t.Boolean({ description: 'Do not verify the API server certificate (labs only)' })),
  impersonate: t.Optional(t.Boolean({ description: 'Send Impersonate-User/Group of the caller with every proxied request' })),
}

export const ImportClusterOption = t.Object(
  {
    name: t.String({ maxLength: 40, description: 'Cluster name, unique per owner; the {cluster} of proxy paths' }),
    displayName: t.Optional(t.String({ maxLength: 100, description: 'Name shown to people' })),
    ...connectionFields,
  },
  { title: 'ImportClusterOption', description: 'A kubeconfig (with context) or the explicit fields, bearer token or client certificate' },
)
export type ImportClusterOption = typeof ImportClusterOption.static

export const ClusterTeam = t.Object(
  {
    id: t.Integer({ description: 'Team id (the {id} of /teams/{id}/clusters)' }),
    name: t.String({ description: 'Team name, unique within the organization' }),
    permission: t.String({
      description:
        "The team's permission, which is what its members may do on the cluster: read (get, list, watch, logs, metrics); write, admin or owner (every verb); none (nothing)",
    }),
  },
  { title: 'ClusterTeam', description: 'A team of the owning organization that was granted the cluster' },
)

export const PatchClusterOption = t.Object(
  {
    displayName: t.Optional(t.String({ maxLength: 100, description: 'Name shown to people' })),
    ...connectionFields,
  },
  {
    description: 'PatchClusterOption: a new display name, and/or new connection fields (checked against the cluster before they are saved)',
  },
)
export type PatchClusterOption = typeof PatchClusterOption.static

export const OwnerParams = t.Object({ owner: t.String({ description: 'User or organization owning the clusters' }) })
export const ClusterParams = t.Object({
  owner: t.String({ description: 'User or organization owning the cluster' }),
  cluster: t.String({ description: 'Cluster name' }),
})
export const TeamClusterParams = t.Object({
  teamId: t.String({ description: 'Team id' }),
  cluster: t.String({ description: "Name of a cluster of the team's organization" }),
})
export const KubeconfigQuery = t.Object({
  readonly: t.Optional(t.String({ description: '"true": the token gets read:cluster instead of write:cluster' })),
})
