import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf, type Report } from './api'
import { type Cluster, ClustersTable } from './clusters-table'
import { Field, fieldValue, SelectField } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'
import { OrgAudit } from './org-audit'
import { SingleSignOn } from './org-sso'
import { Teams } from './org-teams'

type Org = components['schemas']['Organization']
type Team = components['schemas']['Team']
type Member = components['schemas']['User']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/** The org's name in `/orgs/<org>`. */
export const ORG_PAGE = /^\/orgs\/([^/]+)$/

/** The org's members; owners add one by username into a team, and remove one from every team. */
function Members({
  org,
  owner,
  teams,
  members,
  report,
  changed,
}: {
  org: string
  owner: boolean
  teams: Team[]
  members: Member[]
  report: Report
  changed: () => void
}) {
  const remove = async (login: string) => {
    const { error, response } = await api.DELETE('/api/v1/orgs/{org}/members/{username}', { params: { path: { org, username: login } } })
    report(error ? problemOf(error, response.status) : undefined)
    changed()
  }
  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const team = teams.find((each) => each.name === fieldValue(form, 'member-team'))
    if (!team) return
    const path = { teamId: String(team.id), username: fieldValue(form, 'member-username') }
    const { error, response } = await api.PUT('/api/v1/teams/{teamId}/members/{username}', { params: { path } })
    report(error ? problemOf(error, response.status) : undefined)
    if (!error) form.reset()
    changed()
  }
  return (
    <>
      {/* Only an outsider sees none: its members keep their membership private. */}
      {members.length === 0 ? (
        <p>No public members.</p>
      ) : (
        <ul class="tokens" aria-label="Members">
          {members.map((member) => (
            <li key={member.id}>
              <span>{member.login}</span>
              {owner && (
                <button type="button" class="secondary" onClick={() => remove(member.login)}>
                  Remove<span class="visually-hidden"> {member.login} from the organization</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {owner && teams.length > 0 && (
        <form onSubmit={add}>
          <Field id="member-username" label="Username" autocomplete="off" />
          <SelectField id="member-team" label="Team" options={teams.map((team) => team.name)} />
          <button type="submit">Add member</button>
        </form>
      )}
    </>
  )
}

/** The org's clusters the caller may use, each leading to its page, with its status. */
function OrgClusters({ org }: { org: string }) {
  const [clusters, setClusters] = useState<Cluster[]>()
  const [note, setNote] = useState<string>()
  useEffect(() => {
    api.GET('/api/v1/clustersv2/{owner}', { params: { path: { owner: org } } }).then(({ data, error, response }) => {
      if (data) setClusters(data)
      // The API's 404 for an owner it shows: none of its clusters is the caller's to use (docs/api/clusters.md).
      else if (response.status === 404) setNote('None of its clusters is granted to a team of yours.')
      else if (response.status !== 401) setNote(problemOf(error, response.status).message)
    })
  }, [org])
  if (note) return <p>{note}</p>
  if (clusters?.length === 0) return <p>No clusters yet.</p>
  return clusters && <ClustersTable caption={`Clusters of ${org}`} clusters={clusters} />
}

/**
 * `/orgs/<org>` (docs/decisions.md §11): its members, teams (permission and members) and clusters; for its
 * owners (`is-owner` answers 200) also the controls that change them, its single sign-on source and its audit
 * trail. Sections the API refuses the caller say so in words; the owners' sections are absent for others.
 */
export function OrgPage() {
  const [, name = ''] = (ORG_PAGE.exec(location.pathname) ?? []).map(decodeURIComponent)
  const me = useMe()
  const [org, setOrg] = useState<Org>()
  const [owner, setOwner] = useState(false)
  const [members, setMembers] = useState<Member[]>([])
  const [teams, setTeams] = useState<Team[]>()
  const [teamsNote, setTeamsNote] = useState<string>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  // Counts the changes made on this page: the teams' member lists and the audit trail follow it.
  const [changes, setChanges] = useState(0)
  const path = { org: name }
  const report: Report = (found) => setProblem(found ?? NO_PROBLEM)

  const loadPeople = async () => {
    const [people, teamList] = await Promise.all([
      api.GET('/api/v1/orgs/{org}/members', { params: { path, query: { limit: '50' } } }),
      api.GET('/api/v1/orgs/{org}/teams', { params: { path, query: { limit: '50' } } }),
    ])
    setMembers(people.data ?? [])
    setTeams(teamList.data)
    const { status } = teamList.response
    if (teamList.data || status === 401) setTeamsNote(undefined)
    // Outsiders of the org are refused its teams (403, or 404 where the org hides them).
    else
      setTeamsNote(
        status === 403 || status === 404 ? "Only the organization's members see its teams." : problemOf(teamList.error, status).message,
      )
    setChanges((count) => count + 1)
  }
  useEffect(() => {
    api.GET('/api/v1/orgs/{org}', { params: { path } }).then(async ({ data, error, response }) => {
      if (!data) return response.status !== 401 && setProblem(problemOf(error, response.status))
      setOrg(data)
      const ownership = await api.GET('/api/v1/orgs/{org}/is-owner', { params: { path } })
      setOwner(ownership.response.status === 200)
      await loadPeople()
    })
  }, [])

  return (
    <SignedInLayout title={org?.username ?? name} me={me}>
      <ErrorNotice message={problem.message || undefined} />
      {org && (
        <>
          {org.full_name && <p>{org.full_name}</p>}
          <p>
            Visibility: {org.visibility}. You are {owner ? 'an owner' : 'not an owner'} of it.
          </p>
          <h2>Members</h2>
          <Members org={name} owner={owner} teams={teams ?? []} members={members} report={report} changed={loadPeople} />
          <h2>Teams</h2>
          {teamsNote && <p>{teamsNote}</p>}
          {teams && <Teams org={name} owner={owner} teams={teams} changes={changes} report={report} changed={loadPeople} />}
          <h2>Clusters</h2>
          <OrgClusters org={name} />
          {owner && (
            <>
              <h2>Single sign-on</h2>
              <SingleSignOn org={org} report={report} changed={loadPeople} />
              <h2>Audit</h2>
              <OrgAudit org={name} changes={changes} />
            </>
          )}
        </>
      )}
    </SignedInLayout>
  )
}
