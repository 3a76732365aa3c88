import { Elysia, t, type Cookie } from 'elysia'
import type { Deps } from '../../deps'
import { CSRF_COOKIE, SESSION_COOKIE } from '../../http/auth'
import { jsonOnly } from '../../http/body'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { COOKIE_TTL_SECONDS, MSGBUS_COOKIE, signInBearerJwt } from '../../msgbus/service'
import { clientAddress } from '../../http/client-address'
import { LoginMethodQuery, LoginMethodResponse, SignInParams } from './schemas'
import * as signin from './service'

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
 * The message-bus cookie (decisions §6): a short-lived bearer user JWT that the NATS websocket
 * listener reads (`jwt_cookie`); HttpOnly, so page scripts never hold it. None without MSGBUS_URLS.
 */
export async function setMsgbusCookie(deps: Deps, cookie: Jar, uid: number): Promise<void> {
  const jwt = await signInBearerJwt(deps, uid)
  if (jwt === undefined) return
  const secure = deps.config.publicUrl.startsWith('https:')
  cookie[MSGBUS_COOKIE].set({ value: jwt, httpOnly: true, sameSite: 'lax', path: '/', maxAge: COOKIE_TTL_SECONDS, secure })
}

/** Drops the message-bus cookie (sign-out, password change, account deletion). */
export function clearMsgbusCookie(deps: Deps, cookie: Jar): void {
  const secure = deps.config.publicUrl.startsWith('https:')
  cookie[MSGBUS_COOKIE].set({ value: '', httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, secure })
}

/** Sign-in, sign-out and the sign-in method lookup. */
export const signInRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.signin', prefix: '/api/v1' })
    .use(guard(deps))
    .post('/user/signin', async ({ body, request, server, cookie }) => {
      const session = await signin.signIn(deps, body, { address: clientAddress(server, request, deps.config.trustedProxies), userAgent: request.headers.get('user-agent') ?? '' })
      setSessionCookies(deps, cookie, session)
      await setMsgbusCookie(deps, cookie, session.session.uid)
    }, {
      permission: 'public',
      // The answer sets the session cookie: no shared or browser cache may keep it.
      secret: true,
      parse: jsonOnly,
      body: SignInParams,
      response: { 200: t.Void(), 404: ErrorBody, 405: ErrorBody, 409: ErrorBody, 415: ErrorBody, 422: ErrorBody, 429: ErrorBody },
      detail: { summary: 'Sign in with a password; sets the session, _csrf and (with a message bus) msgbus_jwt cookies', tags: ['user'] },
    })
    .get('/user/signout', async ({ me, cookie }) => {
      await signin.signOut(deps, me.sessionId)
      clearSessionCookies(deps, cookie)
    }, {
      permission: 'signed-in',
      response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Sign out: end the session and clear its cookies', tags: ['user'] },
    })
    .get('/user/login-method', ({ query }) => signin.loginMethod(deps, query), {
      permission: 'public',
      query: LoginMethodQuery,
      response: { 200: LoginMethodResponse, 400: ErrorBody },
      detail: { summary: 'How a user or an organization\'s members sign in', tags: ['user'] },
    })
