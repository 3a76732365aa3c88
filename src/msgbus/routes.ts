import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { ClusterHistoryQuery, MsgbusAccount, MsgbusCredentialsResponse, MsgbusTokenParams, UserCredentialsQuery } from './schemas'
import * as msgbus from './service'

const TAGS = ['msgbus']
const errors = { 401: ErrorBody, 403: ErrorBody, 503: ErrorBody }

/** Message-bus credentials and the caller's message-bus tokens (docs/decisions.md §6, §6a). */
export const msgbusRoutes = (deps: Deps) =>
  new Elysia({ name: 'msgbus.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/msgbus/credentials', ({ me }) => msgbus.personalCredentials(deps, me), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      response: { 200: MsgbusCredentialsResponse, ...errors },
      detail: {
        summary: 'New personal message-bus credentials (user.<uid>.>; replies in _INBOX_<uid>.>, set as the client inboxPrefix; 24 h)',
        tags: TAGS,
      },
    })
    .get('/user/msgbus/admin_credentials', ({ me }) => msgbus.adminCredentials(deps, me), {
      signedIn: 'site-admin',
      scope: 'admin',
      secret: true,
      response: { 200: MsgbusCredentialsResponse, ...errors },
      detail: { summary: 'New site-admin message-bus credentials (may subscribe to everything)', tags: TAGS },
    })
    .get('/user/msgbus/user_credentials', ({ me, query }) => msgbus.personalCredentialsOf(deps, me, query.username), {
      signedIn: 'site-admin',
      scope: 'admin',
      secret: true,
      query: UserCredentialsQuery,
      response: { 200: MsgbusCredentialsResponse, ...errors, 404: ErrorBody },
      detail: { summary: 'New personal message-bus credentials of the user named by username (default the caller)', tags: TAGS },
    })
    .get('/user/msgbus/cluster-resource-history', ({ me, query }) => msgbus.clusterHistoryCredentials(deps, me, query), {
      signedIn: 'site-admin',
      scope: 'admin',
      secret: true,
      query: ClusterHistoryQuery,
      response: { 200: MsgbusCredentialsResponse, ...errors, 400: ErrorBody, 404: ErrorBody },
      detail: { summary: 'New credentials that may subscribe crh.<clusterUID>.> of one cluster', tags: TAGS },
    })
    .get('/user/settings/tokens/msgbus-tokens/', ({ me }) => msgbus.listTokens(deps, me.user.id), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(MsgbusAccount), ...errors },
      detail: { summary: 'My issued message-bus keys, newest first', tags: ['settings'] },
    })
    .post(
      '/user/settings/tokens/msgbus-tokens/:id/revoke/',
      async ({ me, params }) => {
        await msgbus.revokeToken(deps, me.user.id, params.id)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: MsgbusTokenParams,
        response: { 200: t.Void(), ...errors, 404: ErrorBody },
        detail: { summary: 'Revoke one of my message-bus keys; its live connections drop at once (idempotent)', tags: ['settings'] },
      },
    )
