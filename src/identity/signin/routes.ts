import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { type Cookie, Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { CSRF_COOKIE, SESSION_COOKIE } from '../../http/auth'
import { clientAddress } from '../../http/client-address'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import {
  AssertionOptions,
  AssertionResponse,
  LoginMethodQuery,
  LoginMethodResponse,
  SignInCodeParams,
  SignInParams,
  SignInTicketCookie,
} from './schemas'
import * as signin from './service'
import { TICKET_TTL_SECONDS } from './tickets'

type Jar = Record<string, Cookie<unknown>>

/** Session cookie HttpOnly; CSRF cookie readable by the page; both Secure when served over TLS. */
export function setSessionCookies(deps: Deps, cookie: Jar, values: { secret: string; csrfToken: string; maxAgeSeconds: number }): void {
  const secure = deps.config.publicUrl.startsWith('https:')
  cookie[SESSION_COOKIE].set({ value: values.secret, httpOnly: true, sameSite: 'lax', path: '/', maxAge: values.maxAgeSeconds, secure })
  cookie[CSRF_COOKIE].set({ value: values.csrfToken, httpOnly: false, sameSite: 'lax', path: '/', maxAge: values.maxAgeSeconds, secure })
}

export function clearSessionCookies(deps: Deps, cookie: Jar): void {
  const secure = deps.config.publicUrl.startsWith('https:')
  for (const name of [SESSION_COOKIE, CSRF_COOKIE])
    cookie[name].set({ value: '', httpOnly: name === SESSION_COOKIE, sameSite: 'lax', path: '/', maxAge: 0, secure })
  clearMsgbusCookie(deps, cookie)
}

/**
 * The message-bus cookie (docs/decisions.md §6): a short-lived bearer user JWT that the NATS websocket
 * listener reads (`jwt_cookie`); HttpOnly, so page scripts never hold it. None without MSGBUS_URLS.
 */
export async function setMsgbusCookie(deps: Deps, cookie: Jar, uid: number): Promise<void> {
  const jwt = await deps.busCookie.issue(uid)
  if (jwt === undefined) return
  const secure = deps.config.publicUrl.startsWith('https:')
  cookie[deps.busCookie.name].set({ value: jwt, httpOnly: true, sameSite: 'lax', path: '/', maxAge: deps.busCookie.maxAgeSeconds, secure })
}

/** Drops the message-bus cookie (sign-out, password change, account deletion). */
export function clearMsgbusCookie(deps: Deps, cookie: Jar): void {
  const secure = deps.config.publicUrl.startsWith('https:')
  cookie[deps.busCookie.name].set({ value: '', httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, secure })
}

/** Where the second steps live: the ticket cookie goes nowhere else. */
const SIGNIN_PATH = '/api/v1/user/signin'
const TICKET_COOKIE = 'platform_signin_ticket'

/** The Set-Cookie of a sign-in ticket, or of its removal (empty value). HttpOnly, SameSite=Strict, sign-in paths only. */
function ticketCookie(deps: Deps, value: string): string {
  const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : ''
  return `${TICKET_COOKIE}=${value}; Path=${SIGNIN_PATH}; Max-Age=${value ? TICKET_TTL_SECONDS : 0}; HttpOnly; SameSite=Strict${secure}`
}

/** A finished sign-in: the session (and message-bus) cookies set; after a second step, its ticket cookie dropped. */
async function signedIn(deps: Deps, cookie: Jar, session: Awaited<ReturnType<typeof signin.signIn>>, secondStep: boolean): Promise<void> {
  setSessionCookies(deps, cookie, session)
  await setMsgbusCookie(deps, cookie, session.session.uid)
  if (secondStep) cookie[TICKET_COOKIE].set({ value: '', path: SIGNIN_PATH, maxAge: 0, httpOnly: true, sameSite: 'strict' })
}

const clientOf = (deps: Deps, server: Parameters<typeof clientAddress>[0], request: Request) => ({
  address: clientAddress(server, request, deps.config.trustedProxies),
  userAgent: request.headers.get('user-agent') ?? '',
})

const secondStepErrors = { 400: ErrorBody, 401: ErrorBody, 409: ErrorBody, 415: ErrorBody, 422: ErrorBody, 429: ErrorBody }

/** Sign-in, its second step, sign-out and the sign-in method lookup. */
export const signInRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.signin', prefix: '/api/v1' })
    .use(guard(deps))
    .post(
      '/user/signin',
      async ({ body, request, server, cookie }) => {
        try {
          await signedIn(deps, cookie, await signin.signIn(deps, body, clientOf(deps, server, request)), false)
        } catch (e) {
          // The 405 of a two-factor account carries the ticket its second step is made with.
          if (e instanceof signin.TwoFactorRequired) Object.assign(e.headers, { 'set-cookie': ticketCookie(deps, e.ticket) })
          throw e
        }
      },
      {
        // Before the permission: a form is 415 ahead of any body refusal the guard would raise.
        jsonOnly: true,
        public: true,
        // The answer sets the session cookie: no shared or browser cache may keep it.
        secret: true,
        body: SignInParams,
        response: { 200: t.Void(), 404: ErrorBody, 405: ErrorBody, 409: ErrorBody, 415: ErrorBody, 422: ErrorBody, 429: ErrorBody },
        detail: {
          summary:
            'Sign in with a password; sets the session, _csrf and (with a message bus) msgbus_jwt cookies. With a second factor: 405 and a sign-in ticket cookie for the second step',
          tags: ['user'],
        },
      },
    )
    .post(
      '/user/signin/two-factor',
      async ({ body, request, server, cookie }) =>
        signedIn(
          deps,
          cookie,
          await signin.finishWithCode(deps, cookie[TICKET_COOKIE].value, body.passcode, clientOf(deps, server, request)),
          true,
        ),
      {
        jsonOnly: true,
        public: true,
        secret: true,
        cookie: SignInTicketCookie,
        body: SignInCodeParams,
        response: { 200: t.Void(), ...secondStepErrors },
        detail: { summary: 'Second sign-in step with a TOTP code or the scratch token; sets the session cookies', tags: ['user'] },
      },
    )
    .post('/user/signin/webauthn/options', async ({ cookie }) => signin.securityKeyOptions(deps, cookie[TICKET_COOKIE].value), {
      public: true,
      cookie: SignInTicketCookie,
      response: { 200: AssertionOptions, 400: ErrorBody, 401: ErrorBody },
      detail: { summary: 'Credential-request options for the security-key sign-in step', tags: ['user'] },
    })
    .post(
      '/user/signin/webauthn',
      async ({ body, request, server, cookie }) =>
        signedIn(
          deps,
          cookie,
          await signin.finishWithSecurityKey(
            deps,
            cookie[TICKET_COOKIE].value,
            body as unknown as AuthenticationResponseJSON,
            clientOf(deps, server, request),
          ),
          true,
        ),
      {
        jsonOnly: true,
        public: true,
        secret: true,
        cookie: SignInTicketCookie,
        body: AssertionResponse,
        response: { 200: t.Void(), ...secondStepErrors },
        detail: { summary: 'Second sign-in step with a security key assertion; sets the session cookies', tags: ['user'] },
      },
    )
    .get(
      '/user/signout',
      async ({ me, cookie }) => {
        await signin.signOut(deps, me.sessionId)
        clearSessionCookies(deps, cookie)
      },
      {
        signedIn: 'signed-in',
        allowedWhilePasswordMustChange: true,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Sign out: end the session and clear its cookies', tags: ['user'] },
      },
    )
    .get('/user/login-method', ({ query }) => signin.loginMethod(deps, query), {
      public: true,
      query: LoginMethodQuery,
      response: { 200: LoginMethodResponse, 400: ErrorBody },
      detail: { summary: "How a user or an organization's members sign in", tags: ['user'] },
    })
