import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { answerPage, PageQuery } from '../../http/pagination'
import { ErrorBody } from '../../http/schemas'
import { User } from '../../identity/schemas'
import {
  CreateCustomRoleOption,
  CreateTeamOption,
  CustomRole,
  EditTeamOption,
  OrgParams,
  Team,
  TeamParams,
  TeamUserParams,
} from '../schemas'
import * as teams from './service'

const TAGS = ['organization']
const NoContent = t.Void({ description: 'No content' })

/** Teams (Gitea's routes), team membership, custom roles and the caller's teams. */
export const teamRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.teams.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/user/teams',
      ({ me, query, set, request }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => teams.listMyTeams(deps, me, page)),
      {
        signedIn: 'signed-in',
        scope: 'organization',
        query: PageQuery,
        response: { 200: t.Array(Team), 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Teams of the caller across organizations, each with its organization', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/teams',
      ({ me, scope, query, set, request }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => teams.listTeams(deps, scope, page)),
      {
        inOrg: 'org-member',
        scope: 'organization',
        params: OrgParams,
        query: PageQuery,
        response: { 200: t.Array(Team), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Teams of an organization, Owners first', tags: TAGS },
      },
    )
    .post('/orgs/:org/teams', async ({ scope, body, status }) => status(201, await teams.createTeam(deps, scope, body)), {
      inOrg: 'admin:org',
      scope: 'organization',
      params: OrgParams,
      body: CreateTeamOption,
      response: { 201: Team, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Create a team (duplicate name: 422)', tags: TAGS },
    })
    .get('/teams/:teamId', ({ scope }) => teams.getTeam(deps, scope), {
      inOrg: 'team-member',
      scope: 'organization',
      params: TeamParams,
      response: { 200: Team, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: 'Get a team (its members and org owners)', tags: TAGS },
    })
    .patch('/teams/:teamId', ({ scope, body }) => teams.editTeam(deps, scope, body), {
      inOrg: 'admin:org',
      scope: 'organization',
      params: TeamParams,
      body: EditTeamOption,
      response: { 200: Team, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Edit a team (the Owners team keeps its name and owner permission)', tags: TAGS },
    })
    .delete(
      '/teams/:teamId',
      async ({ scope, status }) => {
        await teams.deleteTeam(deps, scope)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: TeamParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Delete a team (never the Owners team)', tags: TAGS },
      },
    )
    .get(
      '/teams/:teamId/members',
      ({ me, scope, query, set, request }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => teams.listTeamMembers(deps, scope, me, page)),
      {
        inOrg: 'team-member',
        scope: 'organization',
        params: TeamParams,
        query: PageQuery,
        response: { 200: t.Array(User), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Members of a team', tags: TAGS },
      },
    )
    .put(
      '/teams/:teamId/members/:username',
      async ({ me, scope, params, status }) => {
        await teams.addTeamMember(deps, me, scope, params.username)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: TeamUserParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Add a user to a team (and so to the organization)', tags: TAGS },
      },
    )
    .delete(
      '/teams/:teamId/members/:username',
      async ({ me, scope, params, status }) => {
        await teams.removeTeamMember(deps, me, scope, params.username)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: TeamUserParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: { summary: 'Remove a user from a team (never the last member of Owners)', tags: TAGS },
      },
    )
    .get('/orgs/:org/roles', ({ scope }) => teams.listCustomRoles(deps, scope), {
      inOrg: 'org-member',
      scope: 'organization',
      params: OrgParams,
      response: { 200: t.Array(CustomRole), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: 'Custom roles of an organization', tags: TAGS },
    })
    .post('/orgs/:org/roles', async ({ scope, body, status }) => status(201, await teams.createCustomRole(deps, scope, body)), {
      inOrg: 'admin:org',
      scope: 'organization',
      params: OrgParams,
      body: CreateCustomRoleOption,
      response: { 201: CustomRole, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Define a custom role: org permission strings that teams with it add', tags: TAGS },
    })
