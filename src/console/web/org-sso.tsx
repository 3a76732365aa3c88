import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf, type Report } from './api'
import { Field, fieldValue } from './form'
import type { components } from './openapi'

type Org = components['schemas']['Organization']
type Source = components['schemas']['OrgAuthSourceResponse']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
/** The console makes OpenID Connect sources: the provider type that fits every OIDC provider (docs/api/orgs.md). */
const OPENID_CONNECT = 'openidConnect'

const checked = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked

/**
 * The form of a source: "Display name", "Client ID", "Client secret" (never shown; on an update, empty keeps the
 * stored one), "Discovery URL" and "Members must sign in through it"; for a source that exists, "Active".
 */
function SourceForm({
  source,
  problem,
  submit,
  label,
}: {
  source: Source | undefined
  problem: ApiProblem
  submit: (event: Event) => void
  label: string
}) {
  return (
    <form onSubmit={submit}>
      <Field id="sso-name" label="Display name" autocomplete="off" initial={source?.name} error={problem.fields.name} />
      <Field id="sso-client-id" label="Client ID" autocomplete="off" initial={source?.clientID} error={problem.fields.clientID} />
      <Field
        id="sso-client-secret"
        label={source ? 'Client secret (empty: keep the stored one)' : 'Client secret'}
        type="password"
        autocomplete="new-password"
        optional={Boolean(source)}
        error={problem.fields.clientSecret}
      />
      <Field
        id="sso-discovery-url"
        label="Discovery URL"
        autocomplete="url"
        initial={source?.discoveryURL}
        error={problem.fields.discoveryURL}
      />
      <label class="check">
        <input type="checkbox" name="sso-enforce" defaultChecked={source?.enforceForMembers} /> Members must sign in through it
      </label>
      {source && (
        <label class="check">
          <input type="checkbox" name="sso-active" defaultChecked={source.isActive} /> Active
        </label>
      )}
      <button type="submit">{label}</button>
    </form>
  )
}

/**
 * The org's single sign-on source (owners; docs/api/orgs.md): its facts and the addresses to give the provider
 * and the members, created, updated or deleted here. The client secret is sent, never shown.
 */
export function SingleSignOn({ org, report, changed }: { org: Org; report: Report; changed: () => void }) {
  const [source, setSource] = useState<Source | null>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const path = { org: org.username }
  const load = () =>
    api.GET('/api/v1/orgs/{org}/auth-source', { params: { path } }).then(({ data, error, response }) => {
      if (data) return setSource(data)
      setSource(null)
      // 404 is "none yet": the create form says it.
      if (response.status !== 404 && response.status !== 401) report(problemOf(error, response.status))
    })
  useEffect(() => {
    load()
  }, [])

  const answered = async (error: unknown, status: number) => {
    const found = error ? problemOf(error, status) : NO_PROBLEM
    setProblem(found)
    report(found.message && Object.keys(found.fields).length === 0 ? found : undefined)
    if (error) return
    await load()
    changed()
  }
  const save = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const fields = {
      name: fieldValue(form, 'sso-name'),
      provider: source?.provider ?? OPENID_CONNECT,
      clientID: fieldValue(form, 'sso-client-id'),
      clientSecret: fieldValue(form, 'sso-client-secret'),
      discoveryURL: fieldValue(form, 'sso-discovery-url'),
      enforceForMembers: checked(form, 'sso-enforce'),
    }
    const { error, response } = source
      ? await api.PUT('/api/v1/orgs/{org}/auth-source', { params: { path }, body: { ...fields, isActive: checked(form, 'sso-active') } })
      : await api.POST('/api/v1/orgs/{org}/auth-source', { params: { path }, body: fields })
    await answered(error, response.status)
  }
  const remove = async () => {
    const { error, response } = await api.DELETE('/api/v1/orgs/{org}/auth-source', { params: { path } })
    await answered(error, response.status)
  }

  if (source === undefined) return null
  return (
    <>
      <dl class="facts">
        <dt>Redirect URI</dt>
        <dd>
          <code>{`${location.origin}/api/v1/user/oauth2/org-${org.id}`}</code>
        </dd>
        {source && (
          <>
            <dt>Sign-in page</dt>
            <dd>
              <a href={`/login?org=${encodeURIComponent(org.username)}`}>{`${location.origin}/login?org=${org.username}`}</a>
            </dd>
            <dt>Provider</dt>
            <dd>{source.provider}</dd>
            <dt>State</dt>
            <dd>{source.isActive ? 'active' : 'paused'}</dd>
          </>
        )}
      </dl>
      {source === null && <p>No single sign-on source: members sign in with their passwords.</p>}
      {/* Keyed by the stored source, so a save shows what the server kept. */}
      <SourceForm
        key={JSON.stringify(source)}
        source={source ?? undefined}
        problem={problem}
        submit={save}
        label={source ? 'Save single sign-on' : 'Create single sign-on'}
      />
      {source && (
        <button type="button" class="secondary" onClick={remove}>
          Delete single sign-on
        </button>
      )}
    </>
  )
}
