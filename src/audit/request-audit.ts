import type { Server } from 'bun'
import { parse as parseCookieHeader } from 'cookie'
import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { messageOf } from '../errors'
import { actorOf, presentedCredential } from '../http/auth'
import { clientAddress } from '../http/client-address'
import { requestIdOfRequest } from '../http/request-log'
import type { Executor } from '../storage/database'
import type { CommitCompanion, CompanionSource } from '../storage/write-companion'
import { type AuditDraft, credentialOf, resultOf } from './event'
import type { AuditCredentialKind, AuditKind, AuditObjectRef, SignInMethod } from './schemas'
import * as store from './store'
import { auditWriter } from './writer'

/** An org or user as an event names it. */
export interface Named {
  id: number
  name: string
}

/** What a sign-in route tells about the attempt (identity's services). */
export interface SignInNote {
  method: SignInMethod
  /** The login tried, as sent; unknown until a second step finds its ticket. */
  login?: string
  /** The account the attempt aims at, when it exists. */
  subject?: Named
  /** Set once the sign-in succeeded: the session's write records the event. */
  succeeded: boolean
}

/** What the proxy tells about a proxied request (docs/decisions.md §8). */
export interface KubernetesCall {
  verb: string
  objectRef: AuditObjectRef
  command?: string[]
}

/** A session's audit, told how it ended (an exec's exit code when the member sent one). */
export interface StreamAudit {
  ended(exitCode: number | undefined): void
}

/** Param values longer than this are cut: a path may be long, an event stays small. */
const MAX_PARAM_LENGTH = 200
/** A value shaped like an access token (40 hex digits) is never stored, even sent where a name belongs. */
const TOKEN_SHAPED = /^[0-9a-f]{40}$/i

/** The route's path parameters as the event's `target`: the wildcard left out, long values cut, token-shaped values hidden. */
function targetOf(params: Record<string, string>): Record<string, string> {
  const target: Record<string, string> = {}
  for (const [name, value] of Object.entries(params)) {
    if (name === '*' || typeof value !== 'string') continue
    target[name] = TOKEN_SHAPED.test(value) ? '[redacted]' : value.slice(0, MAX_PARAM_LENGTH)
  }
  return target
}

/** `/api/v1/orgs/:org` → `/api/v1/orgs/{org}`, the OpenAPI form. */
const templateOf = (path: string) => path.replace(/:(\w+)/g, '{$1}')

/** The kind of credential a request presented, for a caller it did not sign in. */
function presentedKind(request: Request): AuditCredentialKind {
  const url = new URL(request.url)
  const presented = presentedCredential(request, url.searchParams, () => parseCookieHeader(request.headers.get('cookie') ?? ''))
  return presented.kind === 'bearer' ? 'token' : presented.kind
}

/**
 * The audit record of one request (docs/decisions.md §8), filled in as the request goes: the
 * route and its parameters, the caller, what the area said (a sign-in, a proxied write), and
 * how it ended. Once the handler runs, the first write the request begins carries the event into
 * its own transaction, stamped with the status the route answers on success; a request that
 * ends otherwise corrects it, and one that wrote nothing (refused, failed, or a change outside
 * the database) is written after the fact.
 */
export class RequestAudit implements CompanionSource {
  readonly time: Date
  route: string | undefined
  params: Record<string, string> = {}
  signIn: SignInNote | undefined
  kubernetes: KubernetesCall | undefined
  /** Set for a request that turned out to change nothing (a proxied access review): no event. */
  unrecorded = false
  /** The org and cluster the action concerns, as far as known. */
  concerns: { org?: Named; cluster?: string } = {}
  /** Set by a stream that took the event over (it writes it when it opens). */
  streamOwned = false
  #actor: Actor | undefined
  #armed = false
  #successStatus = 200
  #orgLookup: Promise<Named | undefined> | undefined
  #pendingId: number | undefined
  #eventId: number | undefined
  #recorded: AuditDraft | undefined
  #finished = false

  constructor(
    private readonly deps: Deps,
    readonly request: Request,
    private readonly server: Server<unknown> | null,
  ) {
    this.time = new Date(deps.clock.now())
  }

  /** The route the router matched (before any hook could fail). */
  noteRoute(route: string | undefined, params: Record<string, string> | undefined): void {
    this.route ??= route
    if (params) this.params = params
  }

  /**
   * The handler is about to run for `actor`: writes begun from now on are the request's change.
   * `org` is the org the guard settled, if any; `successStatus` the status the route answers on success.
   */
  arm(actor: Actor | undefined, org: Named | undefined, successStatus: number): void {
    this.#actor = actor
    this.#successStatus = successStatus
    if (org) this.concerns.org ??= { id: org.id, name: org.name }
    // The guard settled a cluster's owner: a proxied call to a user's cluster concerns no org.
    this.#orgLookup = this.concerns.org || (this.kubernetes && this.params.owner) ? Promise.resolve(undefined) : this.#lookUpOrg()
    this.#armed = true
  }

  companionForWrite(): CommitCompanion | undefined {
    // A proxied call's change is in the member: the platform's own writes on its way (a token's
    // last use) are not it, and its event is written once the member answered, before we do.
    if (!this.#armed || this.unrecorded || this.kubernetes || this.#finished || this.#eventId !== undefined) return undefined
    return {
      beforeCommit: (tx) => this.#writeWith(tx),
      afterCommit: () => {
        this.#eventId ??= this.#pendingId
      },
    }
  }

  async #writeWith(tx: Executor): Promise<void> {
    // Writes run one at a time: an earlier write of this request has committed its event or rolled back.
    // A sign-in's writes before it succeeded (failure counters) are not what it records.
    if (this.#eventId !== undefined || (this.signIn && !this.signIn.succeeded)) return
    const draft = await this.#draft(this.#successStatus)
    const [id] = await store.insertEvents(tx, [draft])
    this.#pendingId = id
    this.#recorded = draft
  }

  /** True when this request leaves an event: a write, or a read an area marked (a sign-in, an exec). */
  #worthRecording(): boolean {
    if (this.unrecorded) return false
    if (this.signIn || this.kubernetes) return true
    return this.route !== undefined && !['GET', 'HEAD', 'OPTIONS'].includes(this.request.method)
  }

  /**
   * The request ended with `status` (undefined: the connection was taken over, as by a WebSocket).
   * Corrects or writes the event; returns once it is committed, and the answer waits for that:
   * an answered request has its event, a proxied write's included (docs/api/audit.md).
   */
  async finish(status: number | undefined): Promise<void> {
    this.#finished = true
    if (status === undefined || this.streamOwned || !this.#worthRecording()) return
    const writer = auditWriter(this.deps)
    if (this.#eventId !== undefined && this.#recorded) {
      const draft = this.#recorded
      if (draft.status === status) return writer.committed(this.#eventId, draft)
      await writer.update(this.#eventId, draft, { status, result: resultOf(status) })
      return
    }
    await writer.append(await this.#draft(status))
  }

  /**
   * The stream the request asked for opened (the connection was handed over): the event is
   * written now with status 101, and completed with the exit code and end time when it ends.
   */
  streamOpened(): StreamAudit | undefined {
    if (this.unrecorded) return undefined
    this.streamOwned = true
    const writer = auditWriter(this.deps)
    const opened = this.#draft(101).then(async (draft) => ({ draft, id: await writer.append(draft) }))
    const failed = (error: unknown) => this.deps.log.error('audit event not recorded', { error: messageOf(error) })
    opened.catch(failed)
    return {
      ended: (exitCode) => {
        const endTime = new Date(this.deps.clock.now())
        opened.then(({ id, draft }) => writer.update(id, draft, { exitCode: exitCode ?? null, endTime })).catch(failed)
      },
    }
  }

  /** The event as it stands, with the outcome of `status`. */
  async #draft(status: number): Promise<AuditDraft> {
    const actor = await this.#caller()
    const org = this.concerns.org ?? (await (this.#orgLookup ??= this.#lookUpOrg()))
    const signIn = this.signIn
    // A sign-in acts as its account once it succeeded; before, nobody is signed in.
    const acting: Named | undefined = signIn ? (signIn.succeeded ? signIn.subject : undefined) : actor?.user
    const credential = actor ? credentialOf(actor) : { kind: signIn ? 'none' : await this.#presentedKind() }
    const kind = this.#kind()
    return {
      time: this.time,
      requestId: requestIdOfRequest(this.request) ?? '',
      kind,
      actorId: acting?.id ?? null,
      actorLogin: acting?.name ?? null,
      realLogin: !signIn && actor?.sudoBy ? actor.sudoBy.name : null,
      subjectId: signIn?.subject?.id ?? null,
      credentialKind: credential.kind,
      credentialName: 'name' in credential ? (credential.name ?? null) : null,
      credentialId: 'id' in credential ? (credential.id ?? null) : null,
      sourceAddress: clientAddress(this.server, this.request, this.deps.config.trustedProxies),
      orgId: org?.id ?? null,
      org: org?.name ?? null,
      cluster: this.concerns.cluster ?? this.#clusterOfParams(org),
      status,
      result: resultOf(status),
      method: signIn ? signIn.method : kind === 'api' ? this.request.method : null,
      route: kind === 'api' && this.route ? templateOf(this.route) : null,
      target: signIn
        ? JSON.stringify(signIn.login === undefined ? {} : { login: signIn.login })
        : kind === 'api'
          ? JSON.stringify(targetOf(this.params))
          : null,
      verb: this.kubernetes?.verb ?? null,
      objectRef: this.kubernetes ? JSON.stringify(this.kubernetes.objectRef) : null,
      command: this.kubernetes?.command ? JSON.stringify(this.kubernetes.command) : null,
      exitCode: null,
      endTime: null,
    }
  }

  #kind(): AuditKind {
    return this.signIn ? 'signin' : this.kubernetes ? 'kubernetes' : 'api'
  }

  /** Who the request acted as; undefined for anonymous callers and refused credentials. */
  async #caller(): Promise<Actor | undefined> {
    if (this.#armed) return this.#actor
    return actorOf(this.deps, this.request, this.server).catch(() => undefined)
  }

  async #presentedKind(): Promise<AuditCredentialKind> {
    const refused = await actorOf(this.deps, this.request, this.server).then(
      () => false,
      () => true,
    )
    return refused ? presentedKind(this.request) : 'none'
  }

  /** The org the route's parameters name: `org`, `orgname`, an org `owner`, or a team's org. */
  async #lookUpOrg(): Promise<Named | undefined> {
    const { org, orgname, owner, teamId } = this.params
    const facts = this.deps.orgFacts
    const name = org ?? orgname ?? owner
    const found = name
      ? await facts.findOrgByName(name)
      : teamId && /^\d{1,15}$/.test(teamId)
        ? await facts.findTeamById(Number(teamId)).then((team) => team && facts.findOrgById(team.orgId))
        : undefined
    return found && { id: found.id, name: found.name }
  }

  /** `owner/cluster` from the route's parameters (a team route's cluster belongs to the team's org). */
  #clusterOfParams(org: Named | undefined): string | null {
    const { owner, cluster } = this.params
    const by = owner ?? org?.name
    return cluster && by ? `${by}/${cluster}` : null
  }
}
