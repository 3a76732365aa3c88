import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { User } from '../../identity/schemas'
import { OrgParams } from '../schemas'
import { AccessTokenInfo, CreateOrgAccessTokenOption, OrgTokenParams } from './schemas'
import * as systemAdmin from './service'

const TAGS = ['organization']
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** The org system admin and its access tokens (docs/decisions.md §6a); its message-bus keys: msgbus/system-admin/. */
export const systemAdminRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.system-admin.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .post('/orgs/:org/system-admin', async ({ me, scope, status }) => status(201, await systemAdmin.createSystemAdmin(deps, me, scope)), {
      inOrg: 'create:org-system-admin',
      scope: 'admin',
      params: OrgParams,
      response: { 201: User, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: { summary: 'Create the organization system admin (a bot user, login <org>-sysadmin)', tags: TAGS },
    })
    .get('/orgs/:org/tokens/access-tokens/', ({ scope }) => systemAdmin.listAccessTokens(deps, scope), {
      inOrg: 'list:access-token',
      scope: 'organization',
      params: OrgParams,
      response: { 200: t.Array(AccessTokenInfo), ...errors },
      detail: { summary: 'Access tokens of the organization system admin (token always empty)', tags: TAGS },
    })
    .post(
      '/orgs/:org/tokens/access-tokens/',
      async ({ me, scope, body, status }) => status(201, await systemAdmin.createAccessToken(deps, scope, me, body)),
      {
        inOrg: 'create:access-token',
        scope: 'organization',
        secret: true,
        params: OrgParams,
        body: CreateOrgAccessTokenOption,
        response: { 201: AccessTokenInfo, ...errors, 422: ErrorBody },
        detail: { summary: 'Create an access token of the organization system admin; the plaintext is in token, once', tags: TAGS },
      },
    )
    .delete(
      '/orgs/:org/tokens/access-tokens/:id',
      async ({ scope, params }) => {
        await systemAdmin.deleteAccessToken(deps, scope, params.id)
      },
      {
        inOrg: 'delete:access-token',
        scope: 'organization',
        params: OrgTokenParams,
        response: { 200: t.Void(), ...errors },
        detail: { summary: 'Delete an access token of the organization system admin', tags: TAGS },
      },
    )
