import { t } from 'elysia'

export const ClusterInfo = t.Object({
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
  status: t.Object({
    phase: t.Union([t.Literal('Active'), t.Literal('Unreachable')], { description: 'Whether the API server answered just now' }),
    message: t.Optional(t.String({ description: 'Why it is unreachable' })),
  }, { additionalProperties: true, description: 'Kubernetes-style status, read live from the cluster' }),
}, { description: 'ClusterInfo' })
export type ClusterInfo = typeof ClusterInfo.static

export const ClusterListQuery = t.Object({
  all: t.Optional(t.String({ description: '"true": also clusters of organizations the caller owns or administers' })),
})
