import type { Server, ServerWebSocket } from 'bun'
import type { Actor } from '../../authz/actor'
import type { ClusterScope, ClusterVerb } from '../../authz/clusters'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { timedUpstream } from '../../http/metrics'
import type { RequestHeaders } from '../../net/http1/request'
import type { ClientWebSocket } from '../../net/websocket'
import type { ClusterConnection } from '../connection'
import { callerOf, type Member, openMemberWebSocket } from '../member/client'
import { connectionOf } from '../service'
import { forwardedHeaders, type RelayRequest, relay, upstreamBody, upstreamPath } from './relay'
import { pathInfoOf } from './request-info'
import { platformGroupsOf } from './reviews'
import { auditSession } from './session-audit'

/** Subresources that open a session in a pod over an upgraded connection. */
const UPGRADE_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward'])
/** Reviews a caller may create with read access: asking what one may do changes nothing. */
const READ_ONLY_CREATES: ReadonlySet<string> = new Set(['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews'])
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * What a proxied request does (authz/clusters.ts), from its method, its path family and raw path
 * after `/k8s` or `/proxy`, and whether it asks to switch protocols: any upgrade, and the exec,
 * attach and portforward subresources by any method, are `exec` (a GET that opens a session is
 * no read); an access review is a `read`; safe methods read; everything else writes.
 */
export function proxiedVerb(method: string, family: 'k8s' | 'proxy', rawPath: string, upgrade: boolean): ClusterVerb {
  if (upgrade) return 'exec'
  const { resource, subresource } = pathInfoOf(family, rawPath)
  if (UPGRADE_SUBRESOURCES.has(subresource)) return 'exec'
  if (READ_METHODS.has(method) || (method === 'POST' && !subresource && READ_ONLY_CREATES.has(resource))) return 'read'
  return 'write'
}

export interface Target {
  scope: ClusterScope
  connection: ClusterConnection
  /**
   * Headers the platform adds for the cluster: impersonation when the registration asks for it, the
   * user and each of the caller's groups (platformGroupsOf) as an `Impersonate-Group` line of its own.
   */
  identity: RequestHeaders
  /** Sends one request to the cluster on the caller's behalf (relay.ts), ended when the caller's own request is. */
  relay(request: Omit<RelayRequest, 'clientSignal'>): Promise<Response>
  /** Opens a WebSocket to `path` of the cluster offering `protocols`, with the identity headers. */
  openWebSocket(path: string, protocols: string[]): Promise<ClientWebSocket>
}

/**
 * The admitted cluster's connection, and the impersonation headers of registrations that ask for
 * them (docs/decisions.md §12); every call to the cluster for this request carries `clientSignal`, the request's own.
 */
export async function targetOf(deps: Deps, actor: Actor, scope: ClusterScope, clientSignal: AbortSignal): Promise<Target> {
  const groups = platformGroupsOf(scope)
  const identity: RequestHeaders = scope.cluster.impersonate
    ? { 'impersonate-user': actor.user.name, ...(groups.length > 0 ? { 'impersonate-group': groups } : {}) }
    : {}
  const member: Member = { name: scope.cluster.name, connection: await connectionOf(deps, scope.cluster) }
  const label = `${scope.owner.name}/${scope.cluster.name}`
  const caller = callerOf(actor)
  return {
    scope,
    connection: member.connection,
    identity,
    relay: (request) => timedUpstream(deps, label, () => relay(deps, member, { caller, ...request, clientSignal })),
    openWebSocket: (path, protocols) => openMemberWebSocket(deps, member, path, protocols, identity),
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
 * member's answer, errors included, comes back unchanged. Throws invalid, upstream.
 */
export function passThrough(
  target: Target,
  { segments, url, streaming }: PassThroughPath,
  request: Request,
  parsedBody: unknown,
): Promise<Response> {
  return target.relay({
    method: request.method,
    path: upstreamPath(target.connection, segments, url.search),
    headers: forwardedHeaders(request, target.identity),
    body: upstreamBody(request, parsedBody),
    streaming,
  })
}

const UpgradeRelayMessages = {
  notUpgraded: 'the connection could not be switched to a WebSocket',
  tooSlow: (side: 'client' | 'cluster') => `the ${side} fell behind by more than ${MAX_RELAY_BUFFER_BYTES / 1024 / 1024} MiB`,
} as const

/**
 * Bytes one direction of a relayed session may hold for a side that does not keep up (neither
 * WebSocket API can pause reading its peer): beyond this the session ends (1011) rather than hold
 * more, or lose frames, which Bun's server drops once its own queue is full.
 */
export const MAX_RELAY_BUFFER_BYTES = 8 * 1024 * 1024

/**
 * Relays an admitted upgrade (exec, attach, port-forward: `admitInCluster` with the `exec` verb
 * checked the caller, the handshake and its origin) to `segments` of the member: the member is
 * asked first with the protocols the client offered, and the client is switched to the one the
 * member chose. When the member will not switch (not for a refused address or a handshake past
 * its deadline, which are upstream), the same request
 * as plain HTTP asks again: the apiserver checks the pod, the container and the options before it
 * requires an upgrade, so its refusal (a 404 for a pod that does not exist, a 400 Status naming the
 * bad option) goes back unchanged.
 * Throws invalid, upstream, badRequest (no server to switch: an in-process request).
 */
export async function relayUpgrade(
  target: Target,
  segments: string[],
  request: Request,
  server: Server<unknown> | null,
): Promise<Response | undefined> {
  if (!server) throw new AppError('badRequest', UpgradeRelayMessages.notUpgraded)
  const path = upstreamPath(target.connection, segments, new URL(request.url).search)
  const offered = (request.headers.get('sec-websocket-protocol') ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  let upstream: ClientWebSocket
  try {
    upstream = await target.openWebSocket(path, offered)
  } catch (error) {
    // Refused by the egress policy, or no handshake in time: asking again over plain HTTP would not help.
    if (error instanceof AppError) throw error
    return target.relay({
      method: 'GET',
      path,
      headers: { accept: 'application/json', ...target.identity },
      body: null,
      streaming: false,
    })
  }
  switchProtocols(upstream, request, server)
  auditSession(upstream, pathInfoOf('k8s', `/${segments.join('/')}`).subresource)
  return undefined
}

type Frame = string | ArrayBuffer

const sizeOf = (frame: Frame) => (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength)

/**
 * Upgrades the client and pipes frames both ways; either side closing closes the other. A side
 * that leaves more than MAX_RELAY_BUFFER_BYTES waiting ends the session for both.
 */
function switchProtocols(upstream: ClientWebSocket, request: Request, server: Server<unknown>): undefined {
  const pending: Frame[] = []
  let pendingBytes = 0
  let client: ServerWebSocket<unknown> | undefined
  let upstreamClosed: { code: number; reason: string } | undefined
  let overrun = false
  // 1005 and 1006 may not be sent in a close frame: a member that vanished is a normal end here.
  const closeCode = (code: number) => (code === 1005 || code === 1006 ? 1000 : code)
  const tooSlow = (side: 'client' | 'cluster') => {
    if (overrun) return
    overrun = true
    const reason = UpgradeRelayMessages.tooSlow(side)
    upstream.close(1011, reason)
    client?.close(1011, reason)
  }
  upstream.addEventListener('message', (event) => {
    const frame = event.data as Frame
    if (overrun) return
    if (!client) {
      pending.push(frame)
      if ((pendingBytes += sizeOf(frame)) > MAX_RELAY_BUFFER_BYTES) tooSlow('client')
    } else if (client.send(frame) === 0 || client.getBufferedAmount() > MAX_RELAY_BUFFER_BYTES) tooSlow('client')
  })
  upstream.addEventListener('close', (event) => {
    upstreamClosed = { code: closeCode(event.code), reason: event.reason }
    if (!overrun) client?.close(upstreamClosed.code, upstreamClosed.reason)
  })
  const upgraded = server.upgrade(request, {
    headers: upstream.protocol ? { 'sec-websocket-protocol': upstream.protocol } : {},
    data: {
      open(ws: ServerWebSocket<unknown>) {
        client = ws
        for (const frame of pending.splice(0)) ws.send(frame)
        if (overrun) ws.close(1011, UpgradeRelayMessages.tooSlow('client'))
        else if (upstreamClosed) ws.close(upstreamClosed.code, upstreamClosed.reason)
      },
      message(_ws: unknown, message: string | Buffer) {
        if (overrun) return
        upstream.send(typeof message === 'string' ? message : new Uint8Array(message))
        if (upstream.bufferedAmount > MAX_RELAY_BUFFER_BYTES) tooSlow('cluster')
      },
      close() {
        upstream.close()
      },
    },
  })
  if (!upgraded) {
    upstream.close()
    throw new AppError('badRequest', UpgradeRelayMessages.notUpgraded)
  }
  return undefined
}
