import { Elysia, t } from 'elysia'
import { nowSeconds } from '../../clock'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { answerPage, PageQuery } from '../../http/pagination'
import { ApiResponseMessage, ErrorBody } from '../../http/schemas'
import { UsernameParams } from '../users/schemas'
import {
  AccessToken,
  AccessTokenIdList,
  CreateAccessTokenOption,
  NewAccessTokenParam,
  SettingsAccessToken,
  SettingsTokenParams,
  TokenParams,
} from './schemas'
import * as tokens from './service'

/** Personal access tokens: Gitea's Basic-only `/users/{u}/tokens*` and the settings pages. */
export const tokenRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.tokens', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/users/:username/tokens',
      async ({ me, target, query, set, request }) => {
        const rows = await answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) =>
          tokens.listTokens(deps.db, target.id, page),
        )
        return rows.map((row) => tokens.presentAccessToken(row))
      },
      {
        ofUser: 'self-or-admin',
        password: true,
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(AccessToken), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: "List a user's access tokens (Basic with password), newest first", tags: ['user'] },
      },
    )
    .post(
      '/users/:username/tokens',
      async ({ me, target, body, status }) => {
        const { row, plaintext } = await tokens.createToken(deps.db, target.id, body, me.scopes, nowSeconds(deps.clock))
        return status(201, tokens.presentAccessToken(row, plaintext))
      },
      {
        ofUser: 'self-or-admin',
        password: true,
        secret: true,
        params: UsernameParams,
        body: CreateAccessTokenOption,
        response: { 201: AccessToken, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Create an access token (Basic with password); the plaintext is in sha1, once', tags: ['user'] },
      },
    )
    .delete(
      '/users/:username/tokens/:token',
      async ({ target, params, status }) => {
        await tokens.deleteTokenByIdOrName(deps.db, target.id, params.token)
        return status(204, undefined)
      },
      {
        ofUser: 'self-or-admin',
        password: true,
        params: TokenParams,
        response: { 204: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Delete an access token by id or name (Basic with password)', tags: ['user'] },
      },
    )
    .get(
      '/user/settings/tokens/access-tokens/',
      async ({ me, query, set, request }) => {
        const rows = await answerPage(deps.config.publicUrl, { query, set, request }, me.user, (page) =>
          tokens.listTokens(deps.db, me.user.id, page),
        )
        return rows.map((row) => tokens.presentSettingsToken(row, nowSeconds(deps.clock)))
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: PageQuery,
        response: { 200: t.Array(SettingsAccessToken), 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'List my access tokens, newest first', tags: ['settings'] },
      },
    )
    .post(
      '/user/settings/tokens/access-tokens/',
      async ({ me, body, status }) => {
        const now = nowSeconds(deps.clock)
        const { row, plaintext } = await tokens.createToken(deps.db, me.user.id, body, me.scopes, now)
        return status(201, tokens.presentSettingsToken(row, now, plaintext))
      },
      {
        signedIn: 'signed-in',
        secret: true,
        scope: 'user',
        body: NewAccessTokenParam,
        response: { 201: SettingsAccessToken, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Create an access token; the plaintext is in token, once', tags: ['settings'] },
      },
    )
    .post(
      '/user/settings/tokens/access-tokens/delete-records',
      async ({ me, body }) => {
        const count = await tokens.deleteTokenRecords(deps.db, me.user.id, body.ids)
        return { message: `deleted ${count} access token record(s)` }
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: AccessTokenIdList,
        response: { 200: ApiResponseMessage, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Delete several of my access tokens by id', tags: ['settings'] },
      },
    )
    .delete(
      '/user/settings/tokens/access-tokens/:id',
      async ({ me, params }) => {
        await tokens.deleteToken(deps.db, me.user.id, params.id)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: SettingsTokenParams,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Delete one of my access tokens', tags: ['settings'] },
      },
    )
