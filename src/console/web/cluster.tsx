import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { ClusterTeams } from './cluster-teams'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Cluster = components['schemas']['ClusterInfo']
type AgentState = NonNullable<Cluster['status']['agent']>

/** A time of the API (RFC 3339) as the reader's locale writes it, or "never". */
const when = (time: string | undefined) => (time ? <time dateTime={time}>{new Date(time).toLocaleString()}</time> : 'never')

/** The agent of an agent cluster (docs/agents.md): whether one holds a tunnel now, since when, and who it is. */
function AgentFacts({ agent }: { agent: AgentState }) {
  return (
    <>
      <h2>Agent</h2>
      <dl class="facts">
        <dt>State</dt>
        <dd>{agent.connected ? 'connected' : 'not connected'}</dd>
        <dt>Since</dt>
        <dd>{when(agent.since)}</dd>
        <dt>Last seen</dt>
        <dd>{when(agent.lastSeen)}</dd>
        <dt>Version</dt>
        <dd>{agent.version ?? 'unknown'}</dd>
        <dt>Address</dt>
        <dd>{agent.address ?? 'unknown'}</dd>
      </dl>
    </>
  )
}

/** The owner and name of `/clusters/<owner>/<name>`. */
export const CLUSTER_PAGE = /^\/clusters\/([^/]+)\/([^/]+)$/

/** Saves `text` as a file named `name` (the browser's download, from memory: the kubeconfig's token is shown only here). */
function saveFile(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }))
  const link = document.createElement('a')
  link.href = url
  link.download = name
  link.click()
  URL.revokeObjectURL(url)
}

/**
 * `/clusters/<owner>/<name>` (docs/decisions.md §11): the cluster's status and facts (an agent cluster's agent
 * too), its kubeconfigs (each download makes a new access token limited to this cluster, replacing the previous one; the read-only one may
 * only read), and the teams granted it (cluster-teams.tsx).
 */
export function ClusterPage() {
  const [, owner = '', name = ''] = (CLUSTER_PAGE.exec(location.pathname) ?? []).map(decodeURIComponent)
  const me = useMe()
  const [cluster, setCluster] = useState<Cluster>()
  const [problem, setProblem] = useState<string>()
  const path = { owner, cluster: name }

  useEffect(() => {
    api.GET('/api/v1/clustersv2/{owner}/{cluster}', { params: { path } }).then(({ data, error, response }) => {
      if (data) setCluster(data)
      else if (response.status !== 401) setProblem(problemOf(error, response.status).message)
    })
  }, [])

  const download = async (readonly: boolean) => {
    setProblem(undefined)
    const { data, error, response } = await api.GET('/api/v1/clustersv2/{owner}/{cluster}/kubeconfig', {
      params: { path, query: readonly ? { readonly: 'true' } : {} },
      parseAs: 'text',
    })
    if (data !== undefined) saveFile(`${owner}-${name}${readonly ? '-readonly' : ''}.kubeconfig`, data)
    else setProblem(problemOf(error, response.status).message)
  }

  return (
    <SignedInLayout title={cluster?.displayName ?? name} me={me}>
      <ErrorNotice message={problem} />
      {cluster && (
        <>
          <dl class="facts">
            <dt>Owner</dt>
            <dd>{cluster.ownerName}</dd>
            <dt>Status</dt>
            <dd>
              {cluster.status.phase}
              {cluster.status.message ? `: ${cluster.status.message}` : ''}
            </dd>
            <dt>Kubernetes</dt>
            <dd>{cluster.kubernetesVersion || 'unknown'}</dd>
            <dt>Nodes</dt>
            <dd>{cluster.nodeCount}</dd>
            <dt>Provider</dt>
            <dd>{cluster.provider}</dd>
            <dt>Registered</dt>
            <dd>{cluster.age} ago</dd>
          </dl>
          {cluster.status.agent && <AgentFacts agent={cluster.status.agent} />}
          <h2>Use it with kubectl</h2>
          <p>
            Each download carries a new access token of yours that works on this cluster only and replaces the previous download's; it is
            shown only in the file.
          </p>
          <div class="actions">
            <button type="button" onClick={() => download(false)}>
              Download kubeconfig
            </button>
            <button type="button" class="secondary" onClick={() => download(true)}>
              Download read-only kubeconfig
            </button>
          </div>
          <ClusterTeams owner={owner} cluster={name} me={me} />
        </>
      )}
    </SignedInLayout>
  )
}
