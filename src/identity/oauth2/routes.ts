import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { jsonAnswer } from '../../http/json-answer'
import { ErrorBody } from '../../http/schemas'
import { describeAuthorization, exchangeToken, grantAuthorization, OAuthError } from './authorization'
import { answerDeviceRequest, DEVICE_GRANT_TYPE, describeDeviceRequest, redeemDeviceCode, startDeviceAuthorization } from './device'
import {
  ApplicationIdParams,
  AuthorizeQuery,
  ConsentRequest,
  DeviceAnswer,
  DeviceAuthorizationRequest,
  DeviceAuthorizationResponse,
  DeviceCodeQuery,
  DeviceRequest,
  GrantLocation,
  GrantParams,
  OAuth2Application,
  OAuth2ApplicationForm,
  OAuth2ApplicationParams,
  OAuthErrorBody,
  TokenRequest,
  TokenResponse,
} from './schemas'
import {
  createApplication,
  deleteApplication,
  getApplication,
  listApplications,
  regenerateClientSecret,
  updateApplication,
} from './service'

const tags = ['settings']
const flowTags = ['oauth2']
const redirect = (location: string) => new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } })
/**
 * A script's fetch cannot read a cross-origin redirect (it sees an opaque answer), so a caller that asks for
 * JSON gets the redirect's location in the body instead (docs/decisions.md §11: the console's consent page).
 */
const asksForJson = (request: Request) => /^application\/json\b/i.test(request.headers.get('accept') ?? '')
const formUris = (value: string | string[]) => (Array.isArray(value) ? value : value.split(/\r?\n/))

/** Token and device endpoint answers are never cached (RFC 6749 §5.1); their errors use the RFC's body, not ours. */
async function tokenAnswer(issue: () => Promise<unknown>): Promise<Response> {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    jsonAnswer(JSON.stringify(body), { status, headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...headers } })
  try {
    return json(200, await issue())
  } catch (e) {
    if (!(e instanceof OAuthError)) throw e
    return json(
      e.status,
      { error: e.error, error_description: e.description },
      e.status === 401 ? { 'www-authenticate': 'Basic realm="oauth2"' } : {},
    )
  }
}

/** OAuth2 applications under the user's settings. */
export const oauth2ApplicationRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.oauth2.applications', prefix: '/api/v1/user/settings/applications/oauth2' })
    .use(guard(deps))
    .get('', ({ me }) => listApplications(deps, me.user.id), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(OAuth2Application), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: "List the caller's OAuth2 applications", tags },
    })
    .post(
      '',
      ({ me, body }) =>
        createApplication(deps, me.user.id, {
          name: body.name,
          redirectUris: body.redirect_uris,
          confidentialClient: body.confidential_client,
        }),
      {
        signedIn: 'signed-in',
        scope: 'user',
        secret: true,
        body: OAuth2ApplicationParams,
        response: { 200: OAuth2Application, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Register an OAuth2 application; the client secret is in this answer only', tags },
      },
    )
    .get('/:id', ({ me, params }) => getApplication(deps, me.user.id, params.id), {
      signedIn: 'signed-in',
      scope: 'user',
      params: ApplicationIdParams,
      response: { 200: OAuth2Application, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: "Get one of the caller's OAuth2 applications", tags },
    })
    .put(
      '/:id',
      ({ me, params, body }) =>
        updateApplication(deps, me.user.id, params.id, {
          name: body.name,
          redirectUris: formUris(body.redirect_uris),
          confidentialClient: body.confidential_client,
        }),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: ApplicationIdParams,
        body: OAuth2ApplicationForm,
        type: 'multipart/form-data',
        response: { 200: OAuth2Application, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Update an OAuth2 application (multipart); the secret is kept', tags },
      },
    )
    .delete(
      '/:id',
      async ({ me, params, status }) => {
        await deleteApplication(deps, me.user.id, params.id)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: ApplicationIdParams,
        response: { 204: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Delete an OAuth2 application; the tokens it was granted stop working', tags },
      },
    )
    .post('/:id/regenerate_secret', ({ me, params }) => regenerateClientSecret(deps, me.user.id, params.id), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      params: ApplicationIdParams,
      response: { 200: OAuth2Application, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: 'Replace the client secret of an OAuth2 application; the new one is in this answer only', tags },
    })

/** The authorization-code flow with PKCE (RFC 6749 §4.1, RFC 7636) at Gitea's paths. */
export const oauth2FlowRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.oauth2.flow', prefix: '/login/oauth' })
    .use(guard(deps))
    .get(
      '/authorize',
      async ({ me, query, set }) => {
        const answer = await describeAuthorization(deps, me, query)
        if (answer.consent) return answer.consent
        set.status = 302
        set.headers.location = answer.redirect
      },
      {
        signedIn: 'signed-in',
        query: AuthorizeQuery,
        response: {
          200: ConsentRequest,
          302: t.Void({ description: 'Error redirect to the client' }),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          422: ErrorBody,
        },
        detail: { summary: 'Check an authorization request and describe what the user would grant', tags: flowTags },
      },
    )
    .post(
      '/grant',
      async ({ me, body, request }) => {
        const { granted, ...authorization } = body
        const location = await grantAuthorization(deps, me, authorization, granted === true || granted === 'true')
        // The location carries the code: no cache may keep either answer.
        return asksForJson(request)
          ? jsonAnswer(JSON.stringify({ location }), { headers: { 'cache-control': 'no-store' } })
          : redirect(location)
      },
      {
        signedIn: 'signed-in',
        body: GrantParams,
        response: {
          200: GrantLocation,
          302: t.Void({ description: 'Redirect to the client with code and state, or an error' }),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary:
            'Approve or refuse an authorization request; redirects to the client (with Accept: application/json, 200 and the location)',
          tags: flowTags,
        },
      },
    )
    .post('/device_authorization', ({ body }) => tokenAnswer(() => startDeviceAuthorization(deps, body)), {
      public: true,
      body: DeviceAuthorizationRequest,
      response: { 200: DeviceAuthorizationResponse, 400: OAuthErrorBody, 401: OAuthErrorBody, 422: ErrorBody },
      detail: { summary: 'Start a device sign-in (RFC 8628): a device code to poll with and a user code to approve', tags: flowTags },
    })
    .post(
      '/access_token',
      ({ body, request }) =>
        tokenAnswer(() =>
          (body.grant_type === DEVICE_GRANT_TYPE ? redeemDeviceCode : exchangeToken)(deps, body, request.headers.get('authorization')),
        ),
      {
        public: true,
        body: TokenRequest,
        response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody, 422: ErrorBody },
        detail: {
          summary:
            'Exchange an authorization code, a refresh token (client authenticated) or a device code (authorization_pending, slow_down, access_denied, expired_token until approved) for tokens',
          tags: flowTags,
        },
      },
    )

/** The signed-in user's side of a device sign-in: what is asking, and the answer (the console's /login/device page calls these). */
export const deviceApprovalRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.oauth2.device', prefix: '/api/v1/user/device' })
    .use(guard(deps))
    .get('', ({ me, query }) => describeDeviceRequest(deps, me, query.user_code), {
      signedIn: 'signed-in',
      query: DeviceCodeQuery,
      response: { 200: DeviceRequest, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Describe the device sign-in waiting for a user code (browser session or password only)', tags: flowTags },
    })
    .post('', ({ me, body }) => answerDeviceRequest(deps, me, body.user_code, body.approve), {
      signedIn: 'signed-in',
      jsonOnly: true,
      body: DeviceAnswer,
      response: { 200: DeviceRequest, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 415: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Approve or deny a device sign-in by its user code, once (browser session or password only)', tags: flowTags },
    })
