import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { USER_TYPE } from '../../db/schema/codes'
import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { messageOf } from '../errors'
import { pathOf } from '../http/routable-url'
import { currentCompanionSource, runWithCompanions } from '../storage/write-companion'
import { type KubernetesCall, type Named, RequestAudit, type StreamAudit } from './request-audit'
import type { SignInMethod } from './schemas'
import { auditWriter } from './writer'

export type { KubernetesCall, StreamAudit }

/** What the recorder reads of the app's routes: the status each answers on success. */
export interface RouteInfo {
  method: string
  path: string
  hooks: { response?: unknown }
}

export interface RecorderOptions {
  /** The app's routes (read on first use, once every route is registered). */
  routes: () => readonly RouteInfo[]
  /** GET paths (prefixes) that may be recorded when their handler says so: sign-in callbacks. */
  recordedReads: readonly string[]
}

/** The lowest 1xx-3xx status a route declares, else 200: what it answers when all goes well. */
function successStatusOf(response: unknown): number {
  if (typeof response !== 'object' || response === null) return 200
  const statuses = Object.keys(response)
    .map(Number)
    .filter((s) => s >= 100 && s < 400)
  return statuses.length ? Math.min(...statuses) : 200
}

/** Looks up a route's success status by method and template; the table is built on first use. */
function successStatuses(routes: () => readonly RouteInfo[]) {
  let table: Map<string, number> | undefined
  return (method: string, path: string): number => {
    table ??= new Map(routes().map((r) => [`${r.method} ${r.path}`, successStatusOf(r.hooks.response)]))
    return table.get(`${method} ${path}`) ?? table.get(`ALL ${path}`) ?? 200
  }
}

/** The audit record of the request being served, when it is one that may be recorded. */
function currentAudit(): RequestAudit | undefined {
  const source = currentCompanionSource()
  return source instanceof RequestAudit ? source : undefined
}

/**
 * Records the request as a sign-in attempt by `method` (docs/decisions.md §8): its writes carry
 * the event only once `auditSignedIn` says it succeeded. `login` is what was tried, `subject` the
 * account it aims at, when known; a later call adds what it learned.
 */
export function auditSignIn(method: SignInMethod, login?: string, subject?: Named): void {
  const audit = currentAudit()
  if (!audit) return
  audit.signIn = {
    method,
    login: login ?? audit.signIn?.login,
    subject: subject ? { id: subject.id, name: subject.name } : audit.signIn?.subject,
    succeeded: false,
  }
}

/** The sign-in of the request succeeded as `user`: the session's write records it. */
export function auditSignedIn(user: Named): void {
  const audit = currentAudit()
  if (audit?.signIn) Object.assign(audit.signIn, { subject: { id: user.id, name: user.name }, succeeded: true })
}

/** Names the org or cluster the request's action concerns when its path does not (a cluster imported, an org created). */
export function auditConcerns(concerns: { org?: Named; cluster?: string }): void {
  const audit = currentAudit()
  if (!audit) return
  if (concerns.org) audit.concerns.org = { id: concerns.org.id, name: concerns.org.name }
  if (concerns.cluster) audit.concerns.cluster = concerns.cluster
}

/**
 * Names the request a proxied Kubernetes call (docs/decisions.md §8): its event is of kind
 * `kubernetes`. `undefined` says it only reads (an access review): it leaves no event.
 */
export function auditKubernetes(call: KubernetesCall | undefined): void {
  const audit = currentAudit()
  if (!audit) return
  if (call) audit.kubernetes = call
  else audit.unrecorded = true
}

/** The request writes events of its own (a cluster agent's tunnel, docs/agents.md): the request's own event is not written. */
export function auditNotRecorded(): void {
  const audit = currentAudit()
  if (audit) audit.unrecorded = true
}

/** What a cluster agent's tunnel did (docs/decisions.md §8, kind `agent`). */
export interface AgentAuditFacts {
  verb: 'connected' | 'disconnected' | 'refused'
  /** 101 for a tunnel opened, 1000 and up (the WebSocket close code) for one that ended, 401 or 403 for a refusal. */
  status: number
  requestId: string
  sourceAddress: string
  /** `owner/name`; absent when the token named no cluster. */
  cluster?: string
  /** The owner, when it is an organization (its owners see the event). */
  org?: Named
}

/** Records an agent event; resolves once it is committed. */
export function auditAgent(deps: Deps, facts: AgentAuditFacts): Promise<number> {
  return auditWriter(deps).append({
    time: new Date(deps.clock.now()),
    requestId: facts.requestId,
    kind: 'agent',
    actorId: null,
    actorLogin: null,
    realLogin: null,
    subjectId: null,
    credentialKind: 'agent',
    credentialName: null,
    credentialId: null,
    sourceAddress: facts.sourceAddress,
    orgId: facts.org?.id ?? null,
    org: facts.org?.name ?? null,
    cluster: facts.cluster ?? null,
    status: facts.status,
    result: facts.verb === 'refused' ? 'refused' : 'allowed',
    method: null,
    route: null,
    target: null,
    verb: facts.verb,
    objectRef: null,
    command: null,
    exitCode: null,
    endTime: null,
  })
}

/**
 * The member created the object a proxied create did not name in its path (the name is in the
 * body, or the member made it from generateName): the event names it, as the apiserver's audit does.
 */
export function auditCreatedName(name: string): void {
  const audit = currentAudit()
  const call = audit?.kubernetes
  if (call?.verb === 'create' && call.objectRef.name === undefined) audit!.kubernetes = { ...call, objectRef: { ...call.objectRef, name } }
}

/**
 * The request's session (exec, attach, port-forward) opened: its event is written now, with
 * status 101, and completed by `ended` when the session ends. Undefined outside a recorded request.
 */
export function auditStreamOpened(): StreamAudit | undefined {
  return currentAudit()?.streamOpened()
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** What the recorder reads of a route's context: other plugins put these there. */
interface RouteContext {
  route?: string
  params?: Record<string, string>
  actor?: Actor
  guardSettled?: { scope?: { org: Named }; cluster?: { owner: Named & { type: number } } }
}

/**
 * The audit trail's place in the request lifecycle (docs/decisions.md §8). Every request that
 * may change state (any method but GET, HEAD, OPTIONS; a WebSocket upgrade; a GET under
 * `recordedReads`) runs with a RequestAudit: the database's write path finds it there and adds
 * the event to the request's first write, and once the answer is known the event is corrected
 * or written. Register it before the routes: a route answered before Elysia's lifecycle (the
 * proxy's lean reads) then never calls into it.
 */
export const auditRecorder = (deps: Deps, options: RecorderOptions) => {
  let server: Server<unknown> | null = null
  const successStatus = successStatuses(options.routes)
  const recorded = (request: Request) => {
    if (!READS.has(request.method)) return true
    if (request.method !== 'GET') return false
    if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') return true
    const path = pathOf(request.url)
    return options.recordedReads.some((prefix) => path.startsWith(prefix))
  }
  const audited = async (request: Request, answer: () => unknown): Promise<unknown> => {
    const audit = new RequestAudit(deps, request, server)
    const response = await runWithCompanions(audit, answer)
    try {
      await audit.finish(response instanceof Response ? response.status : undefined)
    } catch (error) {
      // The answer stands: the change is made (or refused) whether or not its late event was written.
      deps.log.error('audit event not recorded', { error: messageOf(error) })
    }
    return response
  }
  return new Elysia({ name: 'audit.recorder' })
    .onStart(({ server: started }) => {
      server = started
    })
    .wrap(
      (handle, request: Request) =>
        (...args: unknown[]) =>
          recorded(request) ? audited(request, () => handle(...args)) : handle(...args),
    )
    .onTransform({ as: 'global' }, (context) => {
      const { route, params } = context as RouteContext
      currentAudit()?.noteRoute(route, params)
    })
    .onError({ as: 'global' }, (context) => {
      const { route, params } = context as RouteContext
      currentAudit()?.noteRoute(route, params)
    })
    .onBeforeHandle({ as: 'global' }, (context) => {
      const audit = currentAudit()
      if (!audit) return
      const { route, params, actor, guardSettled } = context as RouteContext
      audit.noteRoute(route, params)
      // A cluster route's owner, when it is an org, is the org the action concerns: no lookup needed.
      const owner = guardSettled?.cluster?.owner
      const org = guardSettled?.scope?.org ?? (owner?.type === USER_TYPE.organization ? owner : undefined)
      audit.arm(actor, org, successStatus(audit.request.method, route ?? ''))
    })
}
