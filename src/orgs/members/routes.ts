import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { answerPage, PageQuery } from '../../http/pagination'
import { ErrorBody } from '../../http/schemas'
import { User } from '../../identity/schemas'
import { MemberActionParams, MemberActionQuery, OrgParams, OrgUserParams } from '../schemas'
import * as members from './service'

const TAGS = ['organization']
const NoContent = t.Void({ description: 'No content' })
const EmptyBody = t.String({ description: 'Empty body' })

/** Org members and public members, and the console's member actions. */
export const memberRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.members.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/orgs/:org/members',
      ({ actor, scope, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, actor?.user, (page) =>
          members.listMembers(deps, scope, actor, page, false),
        ),
      {
        orgVisible: true,
        scope: 'organization',
        params: OrgParams,
        query: PageQuery,
        response: { 200: t.Array(User), 404: ErrorBody },
        detail: { summary: 'Members: all of them for members and site admins, public ones for others', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/members/:username',
      async ({ actor, scope, params, status, redirect }) => {
        if ((await members.checkMember(deps, scope, actor, params.username)) === 'redirect')
          return redirect(`/api/v1/orgs/${encodeURIComponent(scope.org.name)}/public_members/${encodeURIComponent(params.username)}`, 302)
        return status(204, undefined)
      },
      {
        orgVisible: true,
        scope: 'organization',
        params: OrgUserParams,
        response: { 204: NoContent, 302: NoContent, 404: ErrorBody },
        detail: { summary: 'Is the user a member? 204 yes, 404 no; outsiders are redirected (302) to the public check', tags: TAGS },
      },
    )
    .delete(
      '/orgs/:org/members/:username',
      async ({ scope, params, status }) => {
        await members.removeMember(deps, scope, params.username)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: OrgUserParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: { summary: 'Remove a member from every team of the org (orgLastMember: never the last owner)', tags: TAGS },
      },
    )
    .post(
      '/orgs/:org/members/action/:action',
      async ({ me, scope, params, query }) => {
        await members.memberAction(deps, scope, me, params.action, query.uid)
        return ''
      },
      {
        inOrg: 'org-member',
        scope: 'organization',
        params: MemberActionParams,
        query: MemberActionQuery,
        response: { 200: EmptyBody, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: { summary: 'Member action of the console: private, public, remove or leave (?uid=)', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/public_members',
      ({ actor, scope, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, actor?.user, (page) =>
          members.listMembers(deps, scope, actor, page, true),
        ),
      {
        orgVisible: true,
        scope: 'organization',
        params: OrgParams,
        query: PageQuery,
        response: { 200: t.Array(User), 404: ErrorBody },
        detail: { summary: 'Public members', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/public_members/:username',
      async ({ scope, params, status }) => {
        await members.assertPublicMember(deps, scope, params.username)
        return status(204, undefined)
      },
      {
        orgVisible: true,
        scope: 'organization',
        params: OrgUserParams,
        response: { 204: NoContent, 404: ErrorBody },
        detail: { summary: 'Is the user a public member? 204 yes, 404 no', tags: TAGS },
      },
    )
    .put(
      '/orgs/:org/public_members/:username',
      async ({ me, scope, params, status }) => {
        await members.setOwnPublicity(deps, scope, me, params.username, true)
        return status(204, undefined)
      },
      {
        inOrg: 'org-member',
        scope: 'organization',
        params: OrgUserParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: "Publicize your own membership (403 for anyone else's)", tags: TAGS },
      },
    )
    .delete(
      '/orgs/:org/public_members/:username',
      async ({ me, scope, params, status }) => {
        await members.setOwnPublicity(deps, scope, me, params.username, false)
        return status(204, undefined)
      },
      {
        inOrg: 'org-member',
        scope: 'organization',
        params: OrgUserParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: "Conceal your own membership (403 for anyone else's)", tags: TAGS },
      },
    )
