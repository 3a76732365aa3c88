import type { ComponentChildren } from 'preact'
import type { components } from './openapi'
import { clusterPagePath } from './paths'

export type Cluster = components['schemas']['ClusterInfo']

/**
 * Clusters with their status, each name leading to its page; `owner`, when given, adds an Owner column
 * with what it renders for each cluster (the home page lists several owners, an org's page one).
 */
export function ClustersTable(props: { caption: string; clusters: Cluster[]; owner?: (cluster: Cluster) => ComponentChildren }) {
  const { owner } = props
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Cluster</th>
          {owner && <th scope="col">Owner</th>}
          <th scope="col">Status</th>
          <th scope="col">Kubernetes</th>
        </tr>
      </thead>
      <tbody>
        {props.clusters.map((cluster) => (
          <tr key={cluster.id}>
            <td>
              <a href={clusterPagePath(cluster)}>{cluster.displayName}</a>
            </td>
            {owner && <td>{owner(cluster)}</td>}
            <td>{cluster.status.phase}</td>
            <td>{cluster.kubernetesVersion || '–'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
