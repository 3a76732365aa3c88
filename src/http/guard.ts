import { Elysia } from 'elysia'
import { type Actor, assertTokenScope, type ScopeCategory } from '../authz/actor'
import {
  assertPasswordCredential,
  assertPasswordCurrent,
  authorizeInOrg,
  authorizeOnUser,
  authorizeOrgVisible,
  authorizeSignedIn,
  type OrgPermission,
  type OrgScope,
  type Permission,
  type RouteParams,
  type SignedInPermission,
  type TargetUser,
  type UserPermission,
} from '../authz/authorize'
import { assertClusterLimit, authorizeInCluster, type ClusterScope, type ClusterVerb } from '../authz/clusters'
import type { Deps } from '../deps'
import { andThen, type MaybePromise } from '../maybe-promise'
import { authenticate } from './auth'
import { assertJsonBody, rejectUnreadableBody } from './body'
import { assertWebSocketUpgrade } from './websocket-upgrade'

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const PASSWORD_CHANGE_FLAG = 'x-allowed-while-password-must-change'
const CREDENTIAL = 'x-credential'
/** The macros that say who may call; a route declares exactly one. */
const KINDS = ['public', 'orgVisible', 'signedIn', 'ofUser', 'inOrg', 'inCluster'] as const

/** Routes whose path names no org may name it in query `org` (the usage routes of the spec do). */
function orgFromQuery(params: RouteParams | undefined, query: Record<string, unknown> | undefined): RouteParams {
  if (typeof query?.org !== 'string' || params?.org !== undefined || params?.orgname !== undefined || params?.teamId !== undefined)
    return params ?? {}
  return { ...params, org: query.org }
}

/**
 * What the guard settled about a request. Who may call is answered in transform, before
 * validation (a 401/403/404 comes before any 422); the handler's context is typed by resolve,
 * which runs after validation. This per-request record carries one to the other.
 */
interface Settled {
  me?: Actor
  scope?: OrgScope
  target?: TargetUser
  cluster?: ClusterScope
}

/** A part the transform settled; its absence would be a wiring fault of the guard, never a client's. */
function settledPart<T>(part: T | undefined): T {
  if (part === undefined) throw new Error('guard: resolve ran without the transform that settles the route')
  return part
}

interface GateContext {
  request: Request
  actor: Actor | undefined
  params: RouteParams | undefined
  query: Record<string, unknown> | undefined
  body: unknown
  guardSettled: Settled
}

type Decide = (actor: Actor | undefined, params: RouteParams, request: Request) => Settled | Promise<Settled>

const NO_FLAGS: Readonly<GateFlags> = { passwordChangeRoute: false, passwordCredential: false }

interface GateFlags {
  /** `allowedWhilePasswordMustChange`: callable by a user who must change their password first. */
  passwordChangeRoute: boolean
  /** `password`: only Basic with the account's real password. */
  passwordCredential: boolean
}

/** Who may call, in the guard's order: the credential rule, the kind's decision, the pending password change. Throws the refusal. */
function admit(flags: GateFlags, decide: Decide, actor: Actor | undefined, params: RouteParams, request: Request): MaybePromise<Settled> {
  if (flags.passwordCredential) assertPasswordCredential(actor)
  return andThen(decide(actor, params, request), (settled) => passwordChecked(flags, actor, settled))
}

/** The decision's last check: a caller who must change the password first reaches only the routes allowing it. */
function passwordChecked<T>(flags: GateFlags, actor: Actor | undefined, settled: T): T {
  if (!flags.passwordChangeRoute) assertPasswordCurrent(actor)
  return settled
}

/** What an `inCluster` route needs: a verb, or the verb its request names (the proxy's one route per path family). */
export type ClusterNeed = ClusterVerb | ((request: Request) => ClusterVerb)

/**
 * The cluster tier: the verb's token scope, the cluster and the caller's access to it
 * (authz/clusters.ts), and for `exec` a valid WebSocket upgrade from this site.
 */
const inClusterDecision =
  (deps: Deps, needed: ClusterNeed): Decide =>
  async (actor, params, request) => {
    const verb = typeof needed === 'function' ? needed(request) : needed
    const settled = await authorizeInCluster(deps.clusterFacts, actor, verb, params)
    if (verb === 'exec') assertWebSocketUpgrade(request, settled.me, new URL(deps.config.publicUrl).origin)
    return settled
  }

/**
 * What a route declaring `inCluster: needed` (and no flag) admits, decided as the guard decides
 * it: for routes answered outside Elysia's lifecycle (http/lean-route.ts), and for relays that
 * take a connection over (every upgrade subresource is `exec`). `params` names `owner` and
 * `cluster`. Throws unauthenticated, forbidden, invalid, notFound, badRequest.
 */
export async function admitInCluster(
  deps: Deps,
  actor: Actor | undefined,
  needed: ClusterNeed,
  params: RouteParams,
  request: Request,
): Promise<{ me: Actor; cluster: ClusterScope }> {
  const { me, cluster } = await admit(NO_FLAGS, inClusterDecision(deps, needed), actor, params, request)
  return { me: settledPart(me), cluster: settledPart(cluster) }
}

/**
 * What a route declaring `signedIn: needed`, `scope` and `allowedWhilePasswordMustChange` admits, decided as the
 * guard decides it, for a route answered outside Elysia's lifecycle (http/lean-route.ts), at once (nothing it
 * reads waits). Throws the refusal.
 */
export function admitSignedIn(
  deps: Deps,
  actor: Actor | undefined,
  rule: { signedIn: SignedInPermission; scope: ScopeCategory; allowedWhilePasswordMustChange: boolean },
  request: Request,
): Actor {
  assertClusterLimit(actor)
  const flags = { passwordChangeRoute: rule.allowedWhilePasswordMustChange, passwordCredential: false }
  const me = passwordChecked(flags, actor, authorizeSignedIn(deps, actor, rule.signedIn))
  assertTokenScope(actor, READ_METHODS.has(request.method) ? 'read' : 'write', rule.scope)
  return me
}

/**
 * The lifecycle shared by the permission kinds: the OpenAPI record, and the transform that
 * decides (`decide` throws the refusal, or returns what the handler gets).
 */
function gate(permission: Permission | `cluster:${string}`, decide: Decide) {
  const flags: GateFlags = { passwordChangeRoute: false, passwordCredential: false }
  return {
    // The route's flags, read here whichever order the route declares its options in (a flag
    // declared before the permission has already been folded into `detail`).
    introspect: (options: Record<string, unknown>) => {
      const detail = options.detail as Record<string, unknown> | undefined
      // Two kinds would run both gates and type the handler by both: refused when the app is built.
      // (A kind applied before this one has left only its `x-permission` behind.)
      const others = KINDS.filter((kind) => kind in options).length - 1
      if (others > 0 || detail?.['x-permission'] !== undefined)
        throw new Error(`guard: a route declares one of ${KINDS.join(', ')}, not several`)
      // The cluster tier checks the token scope by its verb, not by the method.
      if ('inCluster' in options && ('scope' in options || detail?.['x-token-scope'] !== undefined))
        throw new Error('guard: an inCluster route has the cluster scope already')
      flags.passwordChangeRoute = options.allowedWhilePasswordMustChange === true || detail?.[PASSWORD_CHANGE_FLAG] === true
      flags.passwordCredential = options.password === true || detail?.[CREDENTIAL] === 'password'
    },
    // Recorded in the OpenAPI operation so readers and the route sweep tests see the rule.
    detail: { 'x-permission': permission } as Record<string, string>,
    // An unreadable body (http/body.ts) is refused only once the caller passed.
    transform: async ({ request, actor, params, query, body, guardSettled }: GateContext) => {
      // A kubeconfig's token reaches its cluster's routes only (the cluster tier checks which).
      if (!permission.startsWith('cluster:')) assertClusterLimit(actor)
      Object.assign(guardSettled, await admit(flags, decide, actor, orgFromQuery(params, query), request))
      rejectUnreadableBody(body)
    },
  }
}

/**
 * Route-level requirements, declared beside each path. Who may call is one of six macros, each
 * handing the handler exactly what its kind settles (authz/authorize.ts has the table):
 * - `public: true`: anyone; the handler reads the optional `actor`;
 * - `orgVisible: true`: anyone who may see the org of the `org` param; the handler gets `scope`;
 * - `signedIn: 'signed-in' | 'site-admin' | ...`: the handler gets `me`, the signed-in caller;
 * - `ofUser: 'self-or-admin'`: the handler gets `me` and `target`, the user of the `username` param;
 * - `inOrg: 'org-member' | 'admin:org' | ...`: the handler gets `me` and `scope`, the org of the
 *   `org` (or `orgname`) param, or of the team of `teamId`;
 * - `inCluster: 'read' | 'write' | 'exec' | 'manage'` (or a function naming the verb of each
 *   request, for the proxy): the handler gets `me` and `cluster`, the cluster of the `owner` and
 *   `cluster` params as the caller may use it (authz/clusters.ts); the token scope is the
 *   cluster's, at the verb's level (read for `read`, write for the others, whatever the method).
 * Beside it:
 * - `password: true`: only Basic with the account's real password (a token cannot mint tokens);
 * - `allowedWhilePasswordMustChange: true`: callable by a user who must change their password first;
 * - `scope`: the token scope category the route touches; GET needs read, other methods write;
 * - `jsonOnly: true`: the route takes JSON bodies only (415 for forms: no cross-site form posts);
 * - `secret: true`: the answer carries a secret shown once (token, client secret, TOTP secret),
 *   so no browser or shared cache may keep it (Cache-Control: no-store).
 */
export const guard = (deps: Deps) =>
  new Elysia({ name: 'guard' })
    .use(authenticate(deps))
    .derive({ as: 'global' }, (): { guardSettled: Settled } => ({ guardSettled: {} }))
    .macro({
      public: (_enabled: true) => gate('public', () => ({})),
      orgVisible: (_enabled: true) => ({
        ...gate('org-visible', async (actor, params) => ({ scope: await authorizeOrgVisible(deps, actor, params) })),
        resolve: ({ guardSettled: settled }: { guardSettled: Settled }) => ({ scope: settledPart(settled.scope) }),
      }),
      signedIn: (needed: SignedInPermission) => ({
        ...gate(needed, (actor) => ({ me: authorizeSignedIn(deps, actor, needed) })),
        resolve: ({ guardSettled: settled }: { guardSettled: Settled }) => ({ me: settledPart(settled.me) }),
      }),
      ofUser: (needed: UserPermission) => ({
        ...gate(needed, (actor, params) => authorizeOnUser(deps, actor, needed, params)),
        resolve: ({ guardSettled: settled }: { guardSettled: Settled }) => ({
          me: settledPart(settled.me),
          target: settledPart(settled.target),
        }),
      }),
      inOrg: (needed: OrgPermission) => ({
        ...gate(needed, (actor, params) => authorizeInOrg(deps, actor, needed, params)),
        resolve: ({ guardSettled: settled }: { guardSettled: Settled }) => ({
          me: settledPart(settled.me),
          scope: settledPart(settled.scope),
        }),
      }),
      inCluster: (needed: ClusterNeed) => {
        const gated = gate(`cluster:${typeof needed === 'function' ? 'by-request' : needed}`, inClusterDecision(deps, needed))
        return {
          ...gated,
          detail: { ...gated.detail, 'x-token-scope': 'cluster' } as Record<string, string>,
          resolve: ({ guardSettled: settled }: { guardSettled: Settled }) => ({
            me: settledPart(settled.me),
            cluster: settledPart(settled.cluster),
          }),
        }
      },
      password: (_required: true) => ({ detail: { [CREDENTIAL]: 'password' } as Record<string, string> }),
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
        transform: ({ actor, request }: { actor: Actor | undefined; request: Request }) =>
          assertTokenScope(actor, READ_METHODS.has(request.method) ? 'read' : 'write', category),
      }),
    })
