import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { Field, fieldValue, SelectField } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Org = components['schemas']['Organization']
type Visibility = NonNullable<components['schemas']['CreateOrgOption']['orgType']>

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
const VISIBILITIES: readonly Visibility[] = ['public', 'limited', 'private']

/** The page of the organization `name`. */
const orgPath = (name: string) => `/orgs/${encodeURIComponent(name)}`

/** `/orgs`: the caller's organizations (private memberships included), each leading to its page, and "New organization". */
export function OrgsPage() {
  const me = useMe()
  const [orgs, setOrgs] = useState<Org[]>()
  const [problem, setProblem] = useState<string>()
  useEffect(() => {
    api.GET('/api/v1/user/orgs', { params: { query: { limit: '50' } } }).then(({ data, error, response }) => {
      if (data) setOrgs(data)
      else if (response.status !== 401) setProblem(problemOf(error, response.status).message)
    })
  }, [])
  return (
    <SignedInLayout title="Organizations" me={me}>
      <ErrorNotice message={problem} />
      {orgs && orgs.length === 0 && <p>You are in no organization yet.</p>}
      {orgs && orgs.length > 0 && (
        <ul class="tokens">
          {orgs.map((org) => (
            <li key={org.id}>
              <a href={orgPath(org.username)}>{org.username}</a>
              <span>{org.visibility}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href="/orgs/new">New organization</a>
      </p>
    </SignedInLayout>
  )
}

/**
 * `/orgs/new`: "Organization name" and "Visibility", "Create organization"; the caller becomes its owner and
 * goes on to its page. The API's reasons (a name taken or reserved, creating orgs not allowed) show in words.
 */
export function NewOrgPage() {
  const me = useMe()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [busy, setBusy] = useState(false)
  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const username = fieldValue(form, 'org-name')
    setBusy(true)
    setProblem(NO_PROBLEM)
    const { data, error, response } = await api.POST('/api/v1/orgs', {
      body: { username, visibility: fieldValue(form, 'visibility') as Visibility },
    })
    setBusy(false)
    if (!data) return setProblem(problemOf(error, response.status))
    location.assign(orgPath(data.username))
  }
  const nameError = problem.fields.username
  return (
    <SignedInLayout title="New organization" me={me}>
      <ErrorNotice message={problem.message && !nameError ? problem.message : undefined} />
      <form onSubmit={create}>
        <Field id="org-name" label="Organization name" autocomplete="off" error={nameError} />
        <SelectField id="visibility" label="Visibility" options={VISIBILITIES} />
        <p>Public: anyone may see it. Limited: signed-in people. Private: its members only.</p>
        <button type="submit" disabled={busy}>
          Create organization
        </button>
      </form>
    </SignedInLayout>
  )
}
