import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf, type Report } from './api'
import { Field, fieldValue, SelectField } from './form'
import type { components } from './openapi'

type Team = components['schemas']['Team']
type Member = components['schemas']['User']
type Permission = NonNullable<components['schemas']['CreateTeamOption']['permission']>

const PERMISSIONS: readonly Permission[] = ['read', 'write', 'admin']
const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/** Text a screen reader hears after a control's visible name, telling apart the same control of each team. */
const Hidden = ({ text }: { text: string }) => <span class="visually-hidden"> {text}</span>

/**
 * One team: its permission and members. Owners set the permission, add and remove members and delete the team;
 * the Owners team keeps its permission and cannot be deleted (the API's rules). Members of the org outside the
 * team are refused its member list (403): the page says so.
 */
function TeamCard({
  team,
  owner,
  changes,
  report,
  changed,
}: {
  team: Team
  owner: boolean
  changes: number
  report: Report
  changed: () => void
}) {
  const teamId = String(team.id)
  const [members, setMembers] = useState<Member[]>()
  useEffect(() => {
    api.GET('/api/v1/teams/{teamId}/members', { params: { path: { teamId }, query: { limit: '50' } } }).then(({ data }) => setMembers(data))
  }, [changes])
  const done = (error: unknown, status: number) => {
    report(error ? problemOf(error, status) : undefined)
    changed()
  }
  const setPermission = async (event: Event) => {
    event.preventDefault()
    const permission = fieldValue(event.currentTarget as HTMLFormElement, `team-${teamId}-permission`) as Permission
    const { error, response } = await api.PATCH('/api/v1/teams/{teamId}', { params: { path: { teamId } }, body: { permission } })
    done(error, response.status)
  }
  const addMember = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const path = { teamId, username: fieldValue(form, `team-${teamId}-username`) }
    const { error, response } = await api.PUT('/api/v1/teams/{teamId}/members/{username}', { params: { path } })
    if (!error) form.reset()
    done(error, response.status)
  }
  const removeMember = async (username: string) => {
    const { error, response } = await api.DELETE('/api/v1/teams/{teamId}/members/{username}', { params: { path: { teamId, username } } })
    done(error, response.status)
  }
  const remove = async () => {
    const { error, response } = await api.DELETE('/api/v1/teams/{teamId}', { params: { path: { teamId } } })
    done(error, response.status)
  }
  const custom = owner && team.type === 'custom'
  return (
    <section class="team" aria-labelledby={`team-${teamId}`}>
      <h3 id={`team-${teamId}`}>{team.name}</h3>
      <p>
        Permission: <strong>{team.permission}</strong>
        {team.description ? ` · ${team.description}` : ''}
      </p>
      {members === undefined && <p>Only the team's members and the organization's owners see who is in it.</p>}
      {members?.length === 0 && <p>No members.</p>}
      {members && members.length > 0 && (
        <ul class="tokens" aria-label={`Members of ${team.name}`}>
          {members.map((member) => (
            <li key={member.id}>
              <span>{member.login}</span>
              {owner && (
                <button type="button" class="secondary" onClick={() => removeMember(member.login)}>
                  Remove
                  <Hidden text={`${member.login} from ${team.name}`} />
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {owner && (
        <form onSubmit={addMember}>
          <Field id={`team-${teamId}-username`} label={<>Username{<Hidden text={`to add to ${team.name}`} />}</>} autocomplete="off" />
          <button type="submit">
            Add to team
            <Hidden text={team.name} />
          </button>
        </form>
      )}
      {custom && (
        <form onSubmit={setPermission}>
          <SelectField
            id={`team-${teamId}-permission`}
            label={<>Permission{<Hidden text={`of ${team.name}`} />}</>}
            options={PERMISSIONS}
            initial={team.permission}
          />
          <div class="actions">
            <button type="submit">
              Save permission
              <Hidden text={`of ${team.name}`} />
            </button>
            <button type="button" class="secondary" onClick={remove}>
              Delete team
              <Hidden text={team.name} />
            </button>
          </div>
        </form>
      )}
    </section>
  )
}

/** "Team name", "Permission", "Create team" (owners): a duplicate name is told beside the field. */
function CreateTeam({ org, report, changed }: { org: string; report: Report; changed: () => void }) {
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const body = { name: fieldValue(form, 'team-name'), permission: fieldValue(form, 'team-permission') as Permission }
    const { error, response } = await api.POST('/api/v1/orgs/{org}/teams', { params: { path: { org } }, body })
    const found = error ? problemOf(error, response.status) : NO_PROBLEM
    setProblem(found)
    report(found.message && !found.fields.name ? found : undefined)
    if (error) return
    form.reset()
    changed()
  }
  return (
    <form onSubmit={create} aria-labelledby="new-team">
      <h3 id="new-team">New team</h3>
      <Field id="team-name" label="Team name" autocomplete="off" error={problem.fields.name} />
      <SelectField id="team-permission" label="Permission" options={PERMISSIONS} />
      <button type="submit">Create team</button>
    </form>
  )
}

/** The org's teams, Owners first; owners also get "New team". */
export function Teams(props: { org: string; owner: boolean; teams: Team[]; changes: number; report: Report; changed: () => void }) {
  return (
    <>
      {props.teams.map((team) => (
        <TeamCard key={team.id} team={team} owner={props.owner} changes={props.changes} report={props.report} changed={props.changed} />
      ))}
      {props.owner && <CreateTeam org={props.org} report={props.report} changed={props.changed} />}
    </>
  )
}
