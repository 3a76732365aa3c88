import type { Server } from 'bun'
import { USER_TYPE } from '../../../db/schema/identity'
import type { Actor } from '../../authz/actor'
import { accessForRequest } from '../../authz/clusters'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { timedUpstream } from '../../http/metrics'
import { type ResolvedCluster, resolveCluster } from '../access'
import type { ClusterConnection } from '../connection'
import { type Member, openMemberWebSocket } from '../member/client'
import { connectionOf } from '../service'
import { forwardedHeaders, type RelayRequest, relay, safeSegments, upstreamBody, upstreamPath } from './relay'

/** Reviews a caller may create with read access: asking what one may do changes nothing. */
const READ_ONLY_CREATES = new Set(['selfsubjectaccessreviews', 'selfsubjectrulesreviews'])

export interface Target {
  resolved: ResolvedCluster
  connection: ClusterConnection
  /** Headers the platform adds for the cluster: impersonation when the registration asks for it. */
  identity: Record<string, string>
  /** Sends one request to the cluster on the caller's behalf (relay.ts). */
  relay(request: RelayRequest): Promise<Response>
}

/** The access a request to `segments` needs: exec is a write even over GET; access reviews are reads. */
function neededAccess(method: string, segments: string[]) {
  const last = segments.at(-1) ?? ''
  if (method === 'POST' && READ_ONLY_CREATES.has(last)) return 'read' as const
  return accessForRequest(method, ['exec', 'attach', 'portforward'].includes(last))
}

/**
 * The cluster `owner/cluster` as `actor` may use it for this request, its connection, and the
 * impersonation headers of registrations that ask for them. Throws notFound, forbidden.
 */
export async function targetFor(
  deps: Deps,
  actor: Actor,
  owner: string,
  cluster: string,
  method: string,
  segments: string[],
): Promise<Target> {
  const resolved = await resolveCluster(deps, actor, owner, cluster, neededAccess(method, segments))
  const identity: Record<string, string> = resolved.cluster.impersonate
    ? {
        'impersonate-user': actor.user.name,
        ...(resolved.owner.type === USER_TYPE.organization ? { 'impersonate-group': `platform:org:${resolved.owner.name}` } : {}),
      }
    : {}
  const member: Member = { name: resolved.cluster.name, connection: await connectionOf(deps, resolved.cluster) }
  const label = `${resolved.owner.name}/${resolved.cluster.name}`
  return {
    resolved,
    connection: member.connection,
    identity,
    relay: (request) => timedUpstream(deps, label, () => relay(deps, member, request)),
  }
}

/** A passthrough request as the route read it: the checked path segments, the URL, whether it streams. */
export interface PassThroughPath {
  segments: string[]
  url: URL
  streaming: boolean
}

/**
 * The native passthrough: the Kubernetes path after `/k8s` forwarded verbatim (validated and
 * re-encoded by safeSegments), so kubectl, client-node and Helm work through the platform. The
 * member's answer, errors included, comes back unchanged. Throws notFound, forbidden, invalid, upstream.
 */
export async function passThrough(
  deps: Deps,
  actor: Actor,
  owner: string,
  cluster: string,
  { segments, url, streaming }: PassThroughPath,
  request: Request,
  parsedBody: unknown,
): Promise<Response> {
  const target = await targetFor(deps, actor, owner, cluster, request.method, segments)
  return target.relay({
    method: request.method,
    path: upstreamPath(target.connection, segments, url.search),
    headers: forwardedHeaders(request, target.identity),
    body: upstreamBody(request, parsedBody),
    streaming,
    clientSignal: request.signal,
  })
}

export const ExecMessages = {
  crossOrigin: 'a cookie-authenticated WebSocket must come from this site (Origin check)',
  noUpgrade: 'expected a WebSocket upgrade',
} as const

/** Relayed frames a slow client has not taken yet; beyond this the session is closed rather than buffered. */
const MAX_PENDING_FRAMES = 1024

/**
 * Relays an exec (or attach) WebSocket: the member is asked first with the protocols the client
 * offered, and the client is switched to the one the member chose. When the member will not
 * switch, its answer to the same path (a Status) goes back as plain HTTP. A cookie-authenticated
 * upgrade must come from this site's origin (CSWSH). Throws notFound, forbidden, invalid, upstream.
 */
export async function relayExec(
  deps: Deps,
  actor: Actor,
  owner: string,
  cluster: string,
  rawPath: string,
  request: Request,
  server: Server<unknown>,
): Promise<Response | undefined> {
  const origin = request.headers.get('origin')
  if (actor.credential === 'session' && origin !== null && origin !== new URL(deps.config.publicUrl).origin)
    throw new AppError('forbidden', ExecMessages.crossOrigin)
  const segments = safeSegments(rawPath)
  const url = new URL(request.url)
  const target = await targetFor(deps, actor, owner, cluster, 'POST', segments)
  const path = upstreamPath(target.connection, segments, url.search)
  const offered = (request.headers.get('sec-websocket-protocol') ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  let upstream: WebSocket
  try {
    upstream = await openMemberWebSocket(
      deps,
      { name: target.resolved.cluster.name, connection: target.connection },
      path,
      offered,
      target.identity,
    )
  } catch {
    return target.relay({
      method: 'GET',
      path,
      headers: { accept: 'application/json', ...target.identity },
      body: null,
      streaming: false,
    })
  }
  return switchProtocols(upstream, request, server)
}

type Frame = string | ArrayBuffer

/** Upgrades the client and pipes frames both ways; either side closing closes the other. */
function switchProtocols(upstream: WebSocket, request: Request, server: Server<unknown>): undefined {
  const pending: Frame[] = []
  let client: { send(data: Frame): unknown; close(code?: number, reason?: string): void } | undefined
  let upstreamClosed: { code: number; reason: string } | undefined
  // 1005 and 1006 may not be sent in a close frame: a member that vanished is a normal end here.
  const closeCode = (code: number) => (code === 1005 || code === 1006 ? 1000 : code)
  upstream.addEventListener('message', (event) => {
    if (client) client.send(event.data as Frame)
    else if (pending.push(event.data as Frame) > MAX_PENDING_FRAMES) upstream.close(1011, 'client too slow')
  })
  upstream.addEventListener('close', (event) => {
    upstreamClosed = { code: closeCode(event.code), reason: event.reason }
    client?.close(upstreamClosed.code, upstreamClosed.reason)
  })
  const upgraded = server.upgrade(request, {
    headers: upstream.protocol ? { 'sec-websocket-protocol': upstream.protocol } : {},
    data: {
      open(ws: NonNullable<typeof client>) {
        client = ws
        for (const frame of pending.splice(0)) ws.send(frame)
        if (upstreamClosed) ws.close(upstreamClosed.code, upstreamClosed.reason)
      },
      message(_ws: unknown, message: Frame | Buffer) {
        upstream.send(typeof message === 'string' ? message : new Uint8Array(message as ArrayBuffer))
      },
      close() {
        upstream.close()
      },
    },
  })
  if (!upgraded) {
    upstream.close()
    throw new AppError('badRequest', ExecMessages.noUpgrade)
  }
  return undefined
}
