import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { OrgParams } from '../../orgs/schemas'
import { CreateOrgMsgbusTokenOption, OrgTokenParams } from '../../orgs/system-admin/schemas'
import { MsgbusAccount, MsgbusCredentialsResponse } from '../schemas'
import * as systemAdminKeys from './service'

const TAGS = ['organization']
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** The message-bus keys of the org system admin (docs/decisions.md §6a). */
export const systemAdminKeyRoutes = (deps: Deps) =>
  new Elysia({ name: 'msgbus.system-admin.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/orgs/:org/tokens/msgbus-tokens/', ({ scope }) => systemAdminKeys.listMsgbusTokens(deps, scope), {
      inOrg: 'list:msgbus-token',
      scope: 'organization',
      params: OrgParams,
      response: { 200: t.Array(MsgbusAccount), ...errors, 503: ErrorBody },
      detail: { summary: 'Message-bus keys of the organization system admin, newest first', tags: TAGS },
    })
    .post('/orgs/:org/tokens/msgbus-tokens/', ({ scope, body }) => systemAdminKeys.createMsgbusToken(deps, scope, body ?? {}), {
      inOrg: 'create:msgbus-token',
      scope: 'organization',
      secret: true,
      params: OrgParams,
      body: t.Optional(CreateOrgMsgbusTokenOption),
      response: { 200: MsgbusCredentialsResponse, ...errors, 422: ErrorBody, 503: ErrorBody },
      detail: {
        summary: 'New message-bus credentials of the organization system admin (org.<orgID>.>, _INBOX.>, publishing usage.events.<org>)',
        tags: TAGS,
      },
    })
    .post(
      '/orgs/:org/tokens/msgbus-tokens/:id/revoke',
      async ({ scope, params }) => {
        await systemAdminKeys.revokeMsgbusToken(deps, scope, params.id)
      },
      {
        inOrg: 'revoke:msgbus-token',
        scope: 'organization',
        params: OrgTokenParams,
        response: { 200: t.Void(), ...errors, 503: ErrorBody },
        detail: { summary: 'Revoke a message-bus key of the organization system admin; its connections drop at once', tags: TAGS },
      },
    )
