import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { ErrorNotice, type Me } from './layout'
import type { components } from './openapi'

type GrantedTeam = components['schemas']['ClusterTeam']
type Team = components['schemas']['Team']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
/** The largest page the API answers (docs/api/README.md): an org's teams fit in one. */
const ONE_PAGE = { limit: '50' }
/** Team permissions that hold `admin:org` (docs/api/orgs.md): their members may grant and revoke. */
const ADMIN_PERMISSIONS: ReadonlySet<string> = new Set(['owner', 'admin'])

/**
 * Whether `me` may grant `org`'s clusters to teams: a site admin, or an owner or admin of the org by one of their
 * teams. A custom role holding admin:org is not seen here: such a member grants through the API.
 */
async function administers(me: Me, org: string): Promise<boolean> {
  if (me.isAdmin) return true
  const { data } = await api.GET('/api/v1/user/teams', { params: { query: ONE_PAGE } })
  return (data ?? []).some((team) => team.organization?.username === org && ADMIN_PERMISSIONS.has(team.permission))
}

/**
 * The teams granted an org's cluster (docs/decisions.md §3a, §11), for anyone who may use it; for the org's owners
 * and admins, "Grant" to another of its teams and "Revoke" for each. A user's own cluster has no teams.
 */
export function ClusterTeams({ owner, cluster, me }: { owner: string; cluster: string; me: Me | undefined }) {
  const [granted, setGranted] = useState<GrantedTeam[]>()
  const [orgTeams, setOrgTeams] = useState<Team[]>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const path = { owner, cluster }
  const load = () =>
    api.GET('/api/v1/clustersv2/{owner}/{cluster}/teams', { params: { path } }).then(({ data }) => data && setGranted(data))
  useEffect(() => {
    load()
  }, [])
  useEffect(() => {
    if (!me || me.login === owner) return
    administers(me, owner).then(async (may) => {
      if (!may) return
      const { data } = await api.GET('/api/v1/orgs/{org}/teams', { params: { path: { org: owner }, query: ONE_PAGE } })
      if (data) setOrgTeams(data)
    })
  }, [me])

  /** Grants the cluster to team `id`, or revokes it; what the API refuses is told at the top of the section. */
  const change = async (id: number, grant: boolean) => {
    setProblem(NO_PROBLEM)
    const params = { params: { path: { teamId: String(id), cluster } } }
    const { error, response } = grant
      ? await api.PUT('/api/v1/teams/{teamId}/clusters/{cluster}', params)
      : await api.DELETE('/api/v1/teams/{teamId}/clusters/{cluster}', params)
    if (error) setProblem(problemOf(error, response.status))
    await load()
  }
  const grant = (event: Event) => {
    event.preventDefault()
    const team = ((event.currentTarget as HTMLFormElement).elements.namedItem('grant-team') as HTMLSelectElement).value
    if (team) change(Number(team), true)
  }

  if (!granted || me?.login === owner || (granted.length === 0 && !orgTeams)) return null
  const grantable = (orgTeams ?? []).filter((team) => !granted.some((g) => Number(g.id) === Number(team.id)))
  return (
    <section aria-labelledby="teams-heading">
      <h2 id="teams-heading">Teams</h2>
      <ErrorNotice message={problem.message || undefined} />
      {granted.length === 0 ? (
        <p>No team of {owner} has been granted this cluster.</p>
      ) : (
        <ul class="tokens" aria-label="Teams granted this cluster">
          {granted.map((team) => (
            <li key={team.id}>
              <span>
                <strong>{team.name}</strong> · {team.permission === 'read' ? 'read only' : `${team.permission}: every verb`}
              </span>
              {orgTeams && (
                <button type="button" class="secondary" onClick={() => change(Number(team.id), false)}>
                  Revoke<span class="visually-hidden"> {team.name}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {orgTeams && grantable.length > 0 && (
        <form onSubmit={grant}>
          <div class="field">
            <label for="grant-team">Team</label>
            <select id="grant-team" name="grant-team">
              {grantable.map((team) => (
                <option key={team.id} value={String(team.id)}>
                  {team.name} ({team.permission})
                </option>
              ))}
            </select>
          </div>
          <button type="submit">Grant</button>
        </form>
      )}
    </section>
  )
}
