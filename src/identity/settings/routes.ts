import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { clientAddress } from '../../http/client-address'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { clearMsgbusCookie, clearSessionCookies } from '../signin/routes'
import { DeleteAccountQuery, Pagination, Profile, ProfileUpdate, UpdatePasswordParams } from './schemas'
import * as settings from './service'

/** The caller's settings: profile, password, account deletion, page size. */
export const settingsRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.settings', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/settings/profile', ({ me }) => settings.profileOf(me.user), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: Profile, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'My profile', tags: ['settings'] },
    })
    .post('/user/settings/profile', ({ me, body }) => settings.updateProfile(deps, me.user, body), {
      signedIn: 'signed-in',
      scope: 'user',
      body: ProfileUpdate,
      response: { 200: Profile, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Update my profile (only the Profile fields are read)', tags: ['settings'] },
    })
    .post(
      '/user/settings/account/password',
      async ({ me, body, request, server, cookie }) => {
        await settings.changePassword(deps, me.user, body, {
          address: clientAddress(server, request, deps.config.trustedProxies),
          sessionId: me.sessionId,
        })
        clearMsgbusCookie(deps, cookie)
      },
      {
        signedIn: 'signed-in',
        allowedWhilePasswordMustChange: true,
        scope: 'user',
        body: UpdatePasswordParams,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 422: ErrorBody, 429: ErrorBody },
        detail: { summary: 'Change my password; every other session ends', tags: ['settings'] },
      },
    )
    .post(
      '/user/settings/account/delete',
      async ({ me, query, request, server, cookie }) => {
        await settings.deleteAccount(deps, me.user, query.password ?? '', clientAddress(server, request, deps.config.trustedProxies))
        clearSessionCookies(deps, cookie)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: DeleteAccountQuery,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 409: ErrorBody, 429: ErrorBody },
        detail: { summary: 'Delete my account (password required) and sign out; 409 while the only owner of an org', tags: ['settings'] },
      },
    )
    .get('/user/settings/pagination', ({ me }) => settings.pageSizeOf(me.user), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: Pagination, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'My default page size', tags: ['settings'] },
    })
    .post('/user/settings/pagination', ({ me, body }) => settings.setPageSize(deps, me.user, body.pageSize), {
      signedIn: 'signed-in',
      scope: 'user',
      body: Pagination,
      response: { 200: Pagination, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Set my default page size', tags: ['settings'] },
    })
