import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { type Cluster, ClustersTable } from './clusters-table'
import { ConnectCluster } from './connect'
import { ImportCluster } from './import'
import { ErrorNotice, SignedInLayout, useMe } from './layout'

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
        <ClustersTable
          caption="Clusters you can use"
          clusters={clusters}
          // Every owner here but the caller is an org of theirs (docs/api/clusters.md): its page is theirs to see.
          owner={(cluster) =>
            cluster.ownerName === me?.login ? (
              cluster.ownerName
            ) : (
              <a href={`/orgs/${encodeURIComponent(cluster.ownerName)}`}>{cluster.ownerName}</a>
            )
          }
        />
      )}
      {me && <ConnectCluster owner={me.login} onConnected={load} />}
      {me && <ImportCluster me={me.login} onImported={load} />}
    </SignedInLayout>
  )
}
