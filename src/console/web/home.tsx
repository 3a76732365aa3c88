import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { ConnectCluster } from './connect'
import { ImportCluster } from './import'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'
import { clusterPagePath } from './paths'

type Cluster = components['schemas']['ClusterInfo']

/** `/`: the clusters the caller may use (their own, their orgs', their teams'), with each one's status; "Connect a cluster" of their own and "Import a cluster". */
export function HomePage() {
  const me = useMe()
  const [clusters, setClusters] = useState<Cluster[]>()
  const [problem, setProblem] = useState<string>()
  const load = () =>
    api.GET('/api/v1/user/clusters', { params: { query: { all: 'true' } } }).then(({ data, error, response }) => {
      if (data) setClusters(data)
      else if (response.status !== 401) setProblem(problemOf(error, response.status).message)
    })
  useEffect(() => {
    load()
  }, [])
  return (
    <SignedInLayout title="Clusters" me={me}>
      <ErrorNotice message={problem} />
      {clusters && clusters.length === 0 && <p>No clusters yet.</p>}
      {clusters && clusters.length > 0 && (
        <table>
          <caption>Clusters you can use</caption>
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">Owner</th>
              <th scope="col">Status</th>
              <th scope="col">Kubernetes</th>
            </tr>
          </thead>
          <tbody>
            {clusters.map((cluster) => (
              <tr key={cluster.id}>
                <td>
                  <a href={clusterPagePath(cluster)}>{cluster.displayName}</a>
                </td>
                {/* Every owner here but the caller is an org of theirs (docs/api/clusters.md): its page is theirs to see. */}
                <td>
                  {cluster.ownerName === me?.login ? (
                    cluster.ownerName
                  ) : (
                    <a href={`/orgs/${encodeURIComponent(cluster.ownerName)}`}>{cluster.ownerName}</a>
                  )}
                </td>
                <td>{cluster.status.phase}</td>
                <td>{cluster.kubernetesVersion || '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {me && <ConnectCluster owner={me.login} onConnected={load} />}
      {me && <ImportCluster me={me.login} onImported={load} />}
    </SignedInLayout>
  )
}
