import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice } from './layout'
import type { components } from './openapi'

type ImportBody = components['schemas']['ImportClusterOption']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/** The form's field for each field the API names in a refusal; a refusal naming none is told at the top. */
const FIELD_OF: Readonly<Record<string, string>> = {
  name: 'import-name',
  kubeconfig: 'import-kubeconfig',
  context: 'import-context',
  server: 'import-server',
  caData: 'import-ca',
  token: 'import-token',
  clientCertificate: 'import-client-certificate',
  clientKey: 'import-client-key',
}

/** A certificate or key as the API takes it, base64 of the PEM (docs/api/clusters.md): pasted PEM is encoded, base64 (a kubeconfig's *-data) kept. */
const base64Pem = (text: string) => (text.startsWith('-----BEGIN') ? btoa(`${text}\n`) : text)

/** The import's body from the form: a kubeconfig when one is pasted, else the explicit fields; empty fields left out. */
function importBodyOf(form: HTMLFormElement): ImportBody {
  const value = (id: string) => fieldValue(form, id).trim()
  const optional = (id: string, encode: (text: string) => string = (text) => text) => (value(id) ? encode(value(id)) : undefined)
  const named = { name: value('import-name'), displayName: optional('import-display-name') }
  if (value('import-kubeconfig'))
    return { ...named, kubeconfig: fieldValue(form, 'import-kubeconfig'), context: optional('import-context') }
  return {
    ...named,
    server: value('import-server'),
    caData: optional('import-ca', base64Pem),
    token: optional('import-token'),
    clientCertificate: optional('import-client-certificate', base64Pem),
    clientKey: optional('import-client-key', base64Pem),
  }
}

/** Where a refusal goes: its message beside the first field it names (the whole message: a TLS failure names the certificate), else at the top. */
function placed(problem: ApiProblem): { field?: string; top?: string } {
  const named = Object.keys(problem.fields).find((field) => FIELD_OF[field])
  return named ? { field: FIELD_OF[named] } : { top: problem.message || undefined }
}

/**
 * "Import a cluster" (docs/decisions.md §3a, §11): registers a cluster the platform can reach, for the caller
 * or an organization of theirs, from a kubeconfig or the API server's address, certificate authority and a
 * credential. The platform connects before it answers; what it could not do is told beside the field concerned.
 * `onImported` refreshes the list beside it.
 */
export function ImportCluster({ me, onImported }: { me: string; onImported: () => void }) {
  const [owners, setOwners] = useState<string[]>([me])
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [imported, setImported] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    api.GET('/api/v1/user/orgs').then(({ data }) => data && setOwners([me, ...data.map((org) => org.username)]))
  }, [me])

  const submit = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const owner = (form.elements.namedItem('import-owner') as HTMLSelectElement).value
    setBusy(true)
    setProblem(NO_PROBLEM)
    setImported('')
    const { data, error, response } = await api.POST('/api/v1/clustersv2/{owner}/import', {
      params: { path: { owner } },
      body: importBodyOf(form),
    })
    setBusy(false)
    if (!data) return setProblem(problemOf(error, response.status))
    setImported(`Cluster ${data.ownerName}/${data.name} imported.`)
    form.reset()
    onImported()
  }

  const where = placed(problem)
  const errorOf = (id: string) => (where.field === id ? problem.message : undefined)
  return (
    <section aria-labelledby="import-heading">
      <h2 id="import-heading">Import a cluster</h2>
      <p>For a cluster whose API server the platform can reach: it connects first, and registers the cluster only if that works.</p>
      <ErrorNotice message={where.top} />
      <form onSubmit={submit}>
        <div class="field">
          <label for="import-owner">Owner</label>
          <select id="import-owner" name="import-owner">
            {owners.map((owner) => (
              <option key={owner} value={owner}>
                {owner}
              </option>
            ))}
          </select>
        </div>
        <Field id="import-name" label="Name" autocomplete="off" error={errorOf('import-name')} />
        <Field id="import-display-name" label="Display name" autocomplete="off" optional />
        <fieldset class="stack">
          <legend>With a kubeconfig</legend>
          <Field id="import-kubeconfig" label="Kubeconfig" autocomplete="off" rows={5} optional error={errorOf('import-kubeconfig')} />
          <Field
            id="import-context"
            label="Context (its current context when empty)"
            autocomplete="off"
            optional
            error={errorOf('import-context')}
          />
        </fieldset>
        <fieldset class="stack">
          <legend>Or with the API server's address and a credential</legend>
          <Field id="import-server" label="API server URL" autocomplete="url" optional error={errorOf('import-server')} />
          <Field id="import-ca" label="Certificate authority (PEM)" autocomplete="off" rows={4} optional error={errorOf('import-ca')} />
          <Field id="import-token" label="Bearer token" type="password" autocomplete="off" optional error={errorOf('import-token')} />
          <Field
            id="import-client-certificate"
            label="Client certificate (PEM)"
            autocomplete="off"
            rows={4}
            optional
            error={errorOf('import-client-certificate')}
          />
          <Field
            id="import-client-key"
            label="Client key (PEM)"
            autocomplete="off"
            rows={4}
            optional
            error={errorOf('import-client-key')}
          />
        </fieldset>
        <button type="submit" disabled={busy}>
          Import
        </button>
        <p role="status" class="outcome">
          {imported}
        </p>
      </form>
    </section>
  )
}
