import { Elysia, t } from 'elysia'
import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { JSON_TYPE } from '../http/json-answer'
import { answerPage, PageQuery } from '../http/pagination'
import { ApiResponseMessage, ErrorBody } from '../http/schemas'
import { AvatarParams } from '../identity/avatars/schemas'
import { Profile } from '../identity/settings/schemas'
import { CreateOrgOption, CreateOrgParams, EditOrgOption, Organization, OrgParams, OrgUserParams } from './schemas'
import * as orgs from './service'

const TAGS = ['organization']
const UsernameParams = t.Object({ username: t.String({ description: 'User name' }) })
const EmptyBody = t.String({ description: 'Empty body' })
const NoContent = t.Void({ description: 'No content' })

/** Organizations: create, read, edit, delete; the caller's orgs; the org avatar. */
export const orgRoutes = (deps: Deps) => {
  // The caller's organizations, answered by both the API route and the console's settings route.
  const listMine = async ({
    me,
    query,
    request,
    set,
  }: {
    me: Actor
    query: PageQuery
    request: Request
    set: { headers: Record<string, string | number> }
  }) => {
    return answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => orgs.listMyOrgs(deps, me, page))
  }
  return new Elysia({ name: 'orgs.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .post(
      '/orgs',
      async ({ me, body, status }) => {
        const org = await orgs.createOrg(deps, me.user, { ...body, origin: 'api' })
        return status(201, await orgs.describeOrg(deps, org))
      },
      {
        signedIn: 'org-creator',
        scope: 'organization',
        body: CreateOrgOption,
        response: { 201: Organization, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Create an organization', tags: TAGS },
      },
    )
    .get('/orgs/:org', ({ scope }) => orgs.describeOrg(deps, scope.org), {
      orgVisible: true,
      scope: 'organization',
      params: OrgParams,
      response: { 200: Organization, 404: ErrorBody },
      detail: { summary: 'Get an organization (404 when hidden from the caller)', tags: TAGS },
    })
    .patch('/orgs/:org', ({ scope, body }) => orgs.editOrg(deps, scope, body), {
      inOrg: 'edit:org',
      scope: 'organization',
      params: OrgParams,
      body: EditOrgOption,
      response: { 200: Organization, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Edit an organization', tags: TAGS },
    })
    .delete(
      '/orgs/:org',
      async ({ me, scope, status }) => {
        await orgs.deleteOrg(deps, scope, me)
        return status(204, undefined)
      },
      {
        inOrg: 'delete:org',
        scope: 'organization',
        params: OrgParams,
        response: { 204: NoContent, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Delete an organization (only its last owner or admin: orgLastAdmin)', tags: TAGS },
      },
    )
    .get('/orgs/:org/user/:username', ({ me, scope, params }) => orgs.orgUserProfile(deps, scope, me, params.username), {
      inOrg: 'org-viewer',
      scope: 'organization',
      params: OrgUserParams,
      response: { 200: Profile, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: { summary: 'Profile of an existing, active user (400 when unknown or inactive)', tags: TAGS },
    })
    .get('/orgs/:org/is-owner', () => '', {
      inOrg: 'org-owner',
      scope: 'organization',
      params: OrgParams,
      response: { 200: EmptyBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: 'Answers 200 when the caller is an owner of the organization, 403 otherwise', tags: TAGS },
    })
    .get('/user/orgs', listMine, {
      signedIn: 'signed-in',
      scope: 'organization',
      query: PageQuery,
      response: { 200: t.Array(Organization), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Organizations of the caller, private memberships included', tags: TAGS },
    })
    .get('/user/settings/organizations', listMine, {
      signedIn: 'signed-in',
      scope: 'organization',
      query: PageQuery,
      response: { 200: t.Array(Organization), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Organizations of the caller (console settings page)', tags: TAGS },
    })
    .get('/user/settings/organizations/create', () => ({ message: 'you may create organizations' }), {
      signedIn: 'org-creator',
      scope: 'organization',
      response: { 200: ApiResponseMessage, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Answers 200 when the caller may create organizations, 403 otherwise', tags: TAGS },
    })
    .post(
      '/user/settings/organizations/create',
      async ({ me, body }) => {
        const org = await orgs.createOrgFromForm(deps, me.user, body)
        return { message: `organization ${org.name} created` }
      },
      {
        signedIn: 'org-creator',
        scope: 'organization',
        body: CreateOrgParams,
        type: 'multipart/form-data',
        response: { 200: ApiResponseMessage, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Create an organization from the console form (multipart)', tags: TAGS },
      },
    )
    .get(
      '/users/:username/orgs',
      ({ me, params, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) => orgs.listOrgsOfUser(deps, me, params.username, page)),
      {
        signedIn: 'signed-in',
        scope: 'organization',
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(Organization), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Organizations of a user (others see public memberships of public orgs only)', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/avatar/',
      ({ scope, set }) => {
        set.headers['content-type'] = JSON_TYPE
        return JSON.stringify(orgs.orgAvatarUrl(deps, scope))
      },
      {
        inOrg: 'view:avatar',
        scope: 'organization',
        params: OrgParams,
        response: { 200: t.String({ description: 'JSON string: the avatar URL' }), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'The organization avatar URL', tags: TAGS },
      },
    )
    .post('/orgs/:org/avatar/', ({ scope, body }) => orgs.uploadOrgAvatar(deps, scope, body.avatar), {
      inOrg: 'update:avatar',
      scope: 'organization',
      params: OrgParams,
      body: AvatarParams,
      type: 'multipart/form-data',
      response: {
        200: t.Object({ avatar_url: t.String({ description: 'The (stable) avatar URL' }) }),
        401: ErrorBody,
        403: ErrorBody,
        404: ErrorBody,
        422: ErrorBody,
      },
      detail: { summary: 'Upload the organization avatar (PNG, JPEG, GIF or WebP, at most 1 MiB)', tags: TAGS },
    })
    .post(
      '/orgs/:org/avatar/delete',
      async ({ scope }) => {
        await orgs.deleteOrgAvatar(deps, scope)
        return { message: 'avatar removed' }
      },
      {
        inOrg: 'delete:avatar',
        scope: 'organization',
        params: OrgParams,
        response: { 200: ApiResponseMessage, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Remove the organization avatar (back to the generated one)', tags: TAGS },
      },
    )
}
