import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { CopyButton, Field, fieldValue } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Application = components['schemas']['OAuth2Application']

const APPLICATIONS = '/api/v1/user/settings/applications/oauth2'
const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
const APPLICATION_FIELDS = ['name', 'redirect_uris'] as const

/** What an application form holds: its name, one redirect URI per line, whether it keeps a secret. */
interface ApplicationInput {
  name: string
  redirectUris: string[]
  confidential: boolean
}

const inputOf = (form: HTMLFormElement): ApplicationInput => ({
  name: fieldValue(form, 'name'),
  redirectUris: fieldValue(form, 'redirect_uris')
    .split(/\r?\n/)
    .filter((line) => line !== ''),
  confidential: (form.elements.namedItem('confidential_client') as HTMLInputElement).checked,
})

/**
 * The fields of registering and of editing: "Application name", "Redirect URIs" (one per line: each is kept
 * exactly as written, docs/api/identity.md) and "Confidential client"; what the API refuses beside its field.
 */
function ApplicationFields({ problem, initial }: { problem: ApiProblem; initial?: Application }) {
  return (
    <>
      <Field id="name" label="Application name" autocomplete="off" initial={initial?.name} error={problem.fields.name} />
      <Field
        id="redirect_uris"
        label="Redirect URIs (one per line)"
        autocomplete="off"
        rows={3}
        initial={initial?.redirect_uris.join('\n')}
        error={problem.fields.redirect_uris}
      />
      <label class="check">
        <input type="checkbox" name="confidential_client" defaultChecked={initial?.confidential_client ?? true} /> Confidential client (a
        server that keeps the client secret; a public one must use PKCE)
      </label>
    </>
  )
}

/** The client id and a client secret, shown once (on registration or a new secret) with a copy button. */
function NewSecret({ application }: { application: Application }) {
  return (
    <section class="notice" aria-labelledby="new-secret">
      <h2 id="new-secret">Client secret of {application.name}</h2>
      <p>Copy the client secret now: it is not shown again.</p>
      <dl class="facts">
        <dt>Client ID</dt>
        <dd>
          <code>{application.client_id}</code>
        </dd>
        <dt>Client secret</dt>
        <dd class="secret">
          <code>{application.client_secret}</code>
        </dd>
      </dl>
      <CopyButton key={application.client_secret} text={application.client_secret ?? ''} label="Copy client secret" />
    </section>
  )
}

/** One application in the list, with "Edit", "Regenerate secret" and "Delete". */
function ApplicationItem(props: { application: Application; act: (action: 'edit' | 'regenerate' | 'delete') => void }) {
  const { application, act } = props
  const named = <span class="visually-hidden"> {application.name}</span>
  return (
    <li>
      <span>
        <strong>{application.name}</strong> · {application.confidential_client ? 'confidential' : 'public'} · client ID{' '}
        <code>{application.client_id}</code> · redirects to {application.redirect_uris.join(', ')}
      </span>
      <span class="actions">
        <button type="button" class="secondary" onClick={() => act('edit')}>
          Edit{named}
        </button>
        <button type="button" class="secondary" onClick={() => act('regenerate')}>
          Regenerate secret{named}
        </button>
        <button type="button" class="secondary" onClick={() => act('delete')}>
          Delete{named}
        </button>
      </span>
    </li>
  )
}

/**
 * `/user/settings/applications` (docs/decisions.md §11): the caller's OAuth2 applications. "Register application"
 * shows the client id and secret once; each application has "Edit" (the form takes the place of registering),
 * "Regenerate secret" (the new one shown once) and "Delete".
 */
export function ApplicationsPage() {
  const me = useMe()
  const [applications, setApplications] = useState<Application[]>([])
  const [shown, setShown] = useState<Application>()
  const [editing, setEditing] = useState<Application>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const load = () => api.GET(APPLICATIONS).then(({ data }) => data && setApplications(data))
  useEffect(() => {
    load()
  }, [])

  const register = async (input: ApplicationInput) =>
    api.POST(APPLICATIONS, { body: { name: input.name, redirect_uris: input.redirectUris, confidential_client: input.confidential } })
  const update = async (id: number, input: ApplicationInput) =>
    api.PUT(`${APPLICATIONS}/{id}`, {
      params: { path: { id } },
      body: { name: input.name, redirect_uris: input.redirectUris.join('\n'), confidential_client: String(input.confidential) },
      // The API takes this one as a form (Gitea's settings form), as docs/api/identity.md says.
      bodySerializer: (body) => {
        const form = new FormData()
        for (const [key, value] of Object.entries(body ?? {})) form.append(key, String(value))
        return form
      },
    })

  const submit = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const input = inputOf(form)
    setProblem(NO_PROBLEM)
    const { data, error, response } = editing ? await update(Number(editing.id), input) : await register(input)
    if (!data) return setProblem(problemOf(error, response.status))
    form.reset()
    if (editing) setEditing(undefined)
    else setShown(data)
    await load()
  }

  const act = (application: Application) => async (action: 'edit' | 'regenerate' | 'delete') => {
    setProblem(NO_PROBLEM)
    if (action === 'edit') return setEditing(application)
    const path = { params: { path: { id: Number(application.id) } } }
    const answer =
      action === 'regenerate'
        ? await api.POST(`${APPLICATIONS}/{id}/regenerate_secret`, path)
        : await api.DELETE(`${APPLICATIONS}/{id}`, path)
    if (answer.error) setProblem(problemOf(answer.error, answer.response.status))
    else if (action === 'regenerate') setShown(answer.data)
    if (action === 'delete' && shown?.id === application.id) setShown(undefined)
    if (editing?.id === application.id) setEditing(undefined)
    await load()
  }

  return (
    <SignedInLayout title="OAuth2 applications" me={me}>
      <p>Applications that sign people in with their platform account and call the API on their behalf.</p>
      <ErrorNotice message={APPLICATION_FIELDS.some((field) => problem.fields[field]) ? undefined : problem.message || undefined} />
      {shown && <NewSecret application={shown} />}
      <h2 id="form-heading">{editing ? `Edit ${editing.name}` : 'Register an application'}</h2>
      <form key={editing?.id ?? 'new'} onSubmit={submit} aria-labelledby="form-heading">
        <ApplicationFields problem={problem} initial={editing} />
        <div class="actions">
          <button type="submit">{editing ? 'Save changes' : 'Register application'}</button>
          {editing && (
            <button type="button" class="secondary" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          )}
        </div>
      </form>
      <h2>Your applications</h2>
      {applications.length === 0 ? (
        <p>No applications yet.</p>
      ) : (
        <ul class="tokens applications">
          {applications.map((application) => (
            <ApplicationItem key={application.id} application={application} act={act(application)} />
          ))}
        </ul>
      )}
    </SignedInLayout>
  )
}
