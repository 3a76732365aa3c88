import { useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { CopyButton, Field, fieldValue } from './form'
import { ErrorNotice } from './layout'
import type { components } from './openapi'

type Connected = components['schemas']['ConnectClusterAnswer']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/** The one-line install of docs/agents.md: the manifest fetched with the agent token, applied by kubectl. */
const manifestCommand = (connected: Connected) =>
  `curl -H "Authorization: Bearer ${connected.token}" ${connected.manifestUrl} | kubectl apply -f -`

/**
 * "Connect a cluster" (docs/decisions.md §10, §11): registers an agent cluster of `owner` by its name, then shows
 * once its agent token, the agent's command line and the manifest's install command (the token is in both and is
 * not shown again: connecting the same name again replaces it). `onConnected` refreshes the list beside it.
 */
export function ConnectCluster({ owner, onConnected }: { owner: string; onConnected: () => void }) {
  const [connected, setConnected] = useState<Connected>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [busy, setBusy] = useState(false)

  const connect = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setBusy(true)
    setProblem(NO_PROBLEM)
    const { data, error, response } = await api.POST('/api/v1/clustersv2/{owner}/connect', {
      params: { path: { owner } },
      body: { name: fieldValue(form, 'name') },
    })
    setBusy(false)
    if (!data) return setProblem(problemOf(error, response.status))
    setConnected(data)
    form.reset()
    onConnected()
  }

  return (
    <section aria-labelledby="connect-heading">
      <h2 id="connect-heading">Connect a cluster</h2>
      <p>For a cluster the platform cannot reach: an agent beside it dials out to the platform.</p>
      {connected && (
        <section class="notice" aria-labelledby="connected-heading">
          <h3 id="connected-heading">Cluster {connected.cluster.name} registered</h3>
          <p>Copy these now: the agent token is not shown again.</p>
          <p>Agent token:</p>
          <p class="secret">
            <code>{connected.token}</code>
          </p>
          <p>Run the agent beside the cluster (add --kubeconfig to name its API server):</p>
          <p class="secret">
            <code>{connected.command}</code>
          </p>
          <CopyButton key={connected.token} text={connected.command} label="Copy agent command" />
          <p>Or run it in the cluster:</p>
          <p class="secret">
            <code>{manifestCommand(connected)}</code>
          </p>
        </section>
      )}
      <ErrorNotice message={problem.fields.name ? undefined : problem.message || undefined} />
      <form onSubmit={connect}>
        <Field id="name" label="Cluster name" autocomplete="off" error={problem.fields.name} />
        <button type="submit" disabled={busy}>
          Connect
        </button>
      </form>
    </section>
  )
}
