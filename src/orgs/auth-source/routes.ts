import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { clientAddress } from '../../http/client-address'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { setMsgbusCookie, setSessionCookies } from '../../identity/signin/routes'
import { OrgParams } from '../schemas'
import { OrgAuthSourceOption, OrgAuthSourceResponse, OrgAuthSourceUpdateOption, SsoParams, SsoQuery } from './schemas'
import * as sources from './service'

const TAGS = ['organization']
const STATE_COOKIE = 'platform_sso_state'
/** Where single sign-on starts and returns (the state cookie goes nowhere else; the audit recorder watches it). */
export const SSO_SIGN_IN_PATH = '/api/v1/user/oauth2/'
const STATE_COOKIE_PATH = SSO_SIGN_IN_PATH
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** An organization's single sign-on source (one per org) and the OpenID Connect sign-in through it. */
export const authSourceRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.auth-source', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/orgs/:org/auth-source', ({ scope }) => sources.getSource(deps, scope), {
      inOrg: 'view:auth-source',
      scope: 'organization',
      params: OrgParams,
      response: { 200: OrgAuthSourceResponse, ...errors },
      detail: { summary: "The organization's single sign-on source (the client secret is never returned)", tags: TAGS },
    })
    .post('/orgs/:org/auth-source', async ({ scope, body, status }) => status(201, await sources.createSource(deps, scope, body)), {
      inOrg: 'create:auth-source',
      scope: 'organization',
      params: OrgParams,
      body: OrgAuthSourceOption,
      response: { 201: OrgAuthSourceResponse, ...errors, 409: ErrorBody, 422: ErrorBody, 502: ErrorBody },
      detail: { summary: "Create the organization's single sign-on source; its discovery URL is fetched and checked", tags: TAGS },
    })
    .put('/orgs/:org/auth-source', ({ scope, body }) => sources.updateSource(deps, scope, body), {
      inOrg: 'update:auth-source',
      scope: 'organization',
      params: OrgParams,
      body: OrgAuthSourceUpdateOption,
      response: { 200: OrgAuthSourceResponse, ...errors, 422: ErrorBody, 502: ErrorBody },
      detail: { summary: 'Update the source; an omitted or empty clientSecret keeps the stored one; isActive pauses it', tags: TAGS },
    })
    .delete(
      '/orgs/:org/auth-source',
      async ({ scope, status }) => {
        await sources.deleteSource(deps, scope)
        return status(204, undefined)
      },
      {
        inOrg: 'delete:auth-source',
        scope: 'organization',
        params: OrgParams,
        response: { 204: t.Void(), ...errors },
        detail: { summary: 'Delete the source: members sign in with their passwords again', tags: TAGS },
      },
    )
    .get(
      '/user/oauth2/:source',
      async ({ actor, params, query, cookie, request, server, set }) => {
        const orgId = sources.orgIdOfSourcePath(params.source)
        const stateCookie = cookie[STATE_COOKIE]!
        const secure = deps.config.publicUrl.startsWith('https:')
        if (query.code === undefined && query.error === undefined) {
          const start = await sources.startSignIn(deps, orgId, actor, query.redirect_to)
          stateCookie.set({
            value: start.sealedState,
            httpOnly: true,
            sameSite: 'lax',
            path: STATE_COOKIE_PATH,
            maxAge: sources.STATE_TTL_SECONDS,
            secure,
          })
          set.status = 302
          set.headers.location = start.location
          return
        }
        const sealed = typeof stateCookie.value === 'string' ? stateCookie.value : undefined
        // The state is single-use: whatever the outcome, the browser drops it.
        stateCookie.set({ value: '', httpOnly: true, sameSite: 'lax', path: STATE_COOKIE_PATH, maxAge: 0, secure })
        const done = await sources.finishSignIn(deps, orgId, new URL(request.url).searchParams, sealed, {
          ip: clientAddress(server, request, deps.config.trustedProxies),
          userAgent: request.headers.get('user-agent') ?? '',
        })
        setSessionCookies(deps, cookie, done.session)
        await setMsgbusCookie(deps, cookie, done.session.session.uid)
        set.status = 302
        set.headers.location = done.location
      },
      {
        public: true,
        params: SsoParams,
        query: SsoQuery,
        response: {
          302: t.Void({ description: 'To the identity provider (start) or into the site (callback)' }),
          400: ErrorBody,
          404: ErrorBody,
          405: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
          502: ErrorBody,
        },
        detail: {
          summary:
            "Single sign-on through an organization's source: without code, redirect to the provider; with code and state, finish signing in",
          tags: ['user'],
        },
      },
    )
