import { Elysia } from 'elysia'
import { scopesAllow, type Actor, type ScopeCategory } from '../authz/actor'
import { assertPasswordCurrent, authorize, type OrgScope, type Permission, type RouteParams } from '../authz/authorize'
import type { Deps } from '../deps'
import { authenticate } from './auth'
import { assertJsonBody, rejectUnreadableBody } from './body'
import { AppError } from '../errors'

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const PASSWORD_CHANGE_FLAG = 'x-allowed-while-password-must-change'

/** Routes whose path names no org may name it in query `org` (the usage routes of the spec do). */
function orgFromQuery(params: RouteParams | undefined, query: Record<string, unknown> | undefined): RouteParams | undefined {
  if (typeof query?.org !== 'string' || params?.org !== undefined || params?.orgname !== undefined || params?.teamId !== undefined) return params
  return { ...params, org: query.org }
}

/**
 * Route-level requirements, declared beside each path:
 * - `permission`: who may call (authz/); on every route but `public` ones the handler gets `me`,
 *   the signed-in caller (public handlers read the optional `actor` instead). Org permissions
 *   load the org of the `org` (or `orgname`) param, or of the team of `teamId`, and hand it to
 *   the handler as `scope`;
 * - `allowedWhilePasswordMustChange: true`: callable by a user who must change their password first;
 * - `scope`: the token scope category the route touches; GET needs read, other methods write;
 * - `jsonOnly: true`: the route takes JSON bodies only (415 for forms: no cross-site form posts);
 * - `secret: true`: the answer carries a secret shown once (token, client secret, TOTP secret),
 *   so no browser or shared cache may keep it (Cache-Control: no-store).
 */
export const guard = (deps: Deps) => {
  // The scope is settled in transform (before validation) and handed over in resolve (after it).
  const scopes = new WeakMap<Request, OrgScope>()
  return new Elysia({ name: 'guard' })
    .use(authenticate(deps))
    .macro({
      permission: (needed: Permission) => {
        let passwordChangeRoute = false
        return {
          // Whether the route lets a user who must change their password through (the flag below,
          // read here whichever of the two options the route declares first).
          introspect: (options: Record<string, unknown>) => {
            const detail = options.detail as Record<string, unknown> | undefined
            passwordChangeRoute = options.allowedWhilePasswordMustChange === true || detail?.[PASSWORD_CHANGE_FLAG] === true
          },
          // Recorded in the OpenAPI operation so readers and the route sweep tests see the rule.
          detail: { 'x-permission': needed } as Record<string, string>,
          // transform runs before validation: who may call is settled before what they sent.
          // An unreadable body (http/body.ts) is refused only then, once the caller passed.
          transform: async ({ actor, params, query, request, body }: { actor: Actor | undefined; params: RouteParams | undefined; query: Record<string, unknown> | undefined; request: Request; body: unknown }) => {
            const scope = await authorize(deps, actor, needed, orgFromQuery(params, query))
            if (!passwordChangeRoute) assertPasswordCurrent(actor)
            if (scope) scopes.set(request, scope)
            rejectUnreadableBody(body)
          },
          // `scope` is only meaningful on org permissions; other routes do not read it.
          resolve: ({ actor, request }: { actor: Actor | undefined; request: Request }) =>
            ({ me: actor as Actor, scope: scopes.get(request) as OrgScope }),
        }
      },
      // A user flagged must_change_password may still call the route: only those that let them see
      // who they are, change the password and sign out declare it.
      allowedWhilePasswordMustChange: (allowed: boolean) => ({ detail: { [PASSWORD_CHANGE_FLAG]: allowed } as Record<string, boolean> }),
      jsonOnly: (only: boolean) => ({
        transform: ({ request }: { request: Request }) => {
          if (only) assertJsonBody(request)
        },
      }),
      secret: (bearing: boolean) => ({
        detail: { 'x-secret-bearing': bearing } as Record<string, boolean>,
        beforeHandle: ({ set }: { set: { headers: Record<string, string | number> } }) => {
          if (bearing) set.headers['cache-control'] = 'no-store'
        },
      }),
      scope: (category: ScopeCategory) => ({
        detail: { 'x-token-scope': category } as Record<string, string>,
        transform: ({ actor, request }: { actor: Actor | undefined; request: Request }) => {
          const level = READ_METHODS.has(request.method) ? 'read' : 'write'
          if (actor && !scopesAllow(actor.scopes, level, category))
            throw new AppError('forbidden', `token does not have at least one of required scope(s): [${level}:${category}]`)
        },
      }),
    })
}
