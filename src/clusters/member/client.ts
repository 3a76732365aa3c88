import { hostname } from 'node:os'
import { connect } from 'node:tls'
import type { Actor } from '../../authz/actor'
import { type Deps, runtimeSlot } from '../../deps'
import { AppError } from '../../errors'
import { Deadlines } from '../../net/deadlines'
import { type EgressPolicy, pin, resolveChecked, tlsNameOf } from '../../net/egress'
import { type Answer, ByteBudget, type StreamedAnswer } from '../../net/http1/answer'
import { Pools, timedOut } from '../../net/http1/pool'
import { type Dialed, headerLine, type Origin, type OriginTls, type RequestHeaders, UnsafeRequest } from '../../net/http1/request'
import { type ClientWebSocket, openWebSocket } from '../../net/websocket'
import { readFact, writeFact } from '../../storage/deployment-facts'
import { agentLastSeen } from '../agent/store'
import { agentTunnels } from '../agent/tunnels'
import type { ClusterConnection } from '../connection'
import { MemberMessages, memberFailure } from './failures'

/**
 * The one way to reach a member cluster. Finite calls go over the kept-alive pool
 * (`src/net/http1/`), streams (watches, followed logs) over the same client on connections of
 * their own, WebSockets (exec, attach) over our own client (`src/net/websocket.ts`); every
 * header with several values as several lines; all with the cluster's credential (a bearer token or a client
 * certificate) and TLS settings (its CA or the system roots, its tlsServerName), and none follows
 * a redirect. Every connection, on every transport, first resolves the server's host name and
 * checks the address with the egress policy as it stands then (not as it stood at import), dials
 * that address, and keeps the name for Host, SNI and the certificate check: a name that
 * re-resolves to a private or metadata address is refused (DNS rebinding). Failures become
 * `upstream` errors naming the cluster, never its address or credential.
 */

/** Calls to member clusters give up after this long unless the caller says otherwise or streams. */
export const MEMBER_TIMEOUT_MS = 10_000

/** A member cluster as the client reaches it: its registration's name (for messages) and connection. */
export interface Member {
  name: string
  connection: ClusterConnection
}

export interface MemberCall {
  method?: string
  /** Path below the server URL, starting with `/`, percent-encoded per segment (and query). */
  path: string
  /** A name with several values goes as one line per value (the kept-alive client writes its own lines). */
  headers?: RequestHeaders
  body?: Uint8Array | null
  timeoutMs?: number
  /** The client's request: its abort (the client went away) ends the call (clientClosed). */
  signal?: AbortSignal
  /**
   * 'stream': an answer too large to buffer (over 1 MiB, or beyond the caller's share of the
   * process's budget) comes back with its body as a stream. Otherwise it is refused: upstream
   * when it is larger than one caller's share, unavailable (503, Retry-After) while others hold
   * the budget.
   */
  large?: 'stream'
  /** Who the call is for (callerOf); calls without one are the platform's own. One caller's slow calls hold at most a share of the cluster's connections. */
  caller?: string
}

export type MemberAnswer = Answer
export type StreamedMemberAnswer = StreamedAnswer

/** The share a call counts against: the user it is made for (after sudo), whatever credential they used. */
export const callerOf = (actor: Actor): string => `user:${actor.user.id}`

/** One caller's part of the bytes the process may hold in member answers being read. */
const CALLER_BUFFER_SHARE = 1 / 4

/**
 * The kept-alive connections of one app, one pool per cluster connection (one server, one
 * credential), and the budget their answers share (PLATFORM_MEMBER_BUFFER_BYTES).
 */
const MEMBER_POOLS = runtimeSlot(
  'clusters.member-pools',
  (deps) =>
    new Pools<ClusterConnection>(
      () => deps.clock.now(),
      new ByteBudget(deps.config.memberBufferBytes, Math.floor(deps.config.memberBufferBytes * CALLER_BUFFER_SHARE)),
    ),
  (pools) => pools.close(),
)

/** How long a member has to switch protocols (exec, attach, port-forward): one that never completes the handshake is let go then. */
export const HANDSHAKE_TIMEOUT_MS = 10_000

/** The WebSocket handshakes in progress, each closed at its deadline (and all of them with the app). */
const HANDSHAKES = runtimeSlot(
  'clusters.member-handshakes',
  (deps) => new Deadlines(() => deps.clock.now()),
  (handshakes) => handshakes.close(),
)

/** Members this process serves itself (the sandbox emulator on loopback), by server and token. */
const OWN_MEMBERS = runtimeSlot('clusters.own-members', () => new Set<string>())
const ownKey = (connection: ClusterConnection) =>
  'token' in connection.credential ? `${connection.server}\u0000${connection.credential.token}` : undefined
/**
 * The sandbox another process of this host serves, in the database: every worker of `serve
 * --workers` proxies to the one the singleton runs. Its host, and a digest of server and token.
 */
const SHARED_OWN_MEMBER = 'sandbox-member'
const sharedOwnFact = (key: string) => `${hostname()} ${new Bun.CryptoHasher('sha256').update(key).digest('hex')}`

/**
 * Marks `connection` as a member a process of this host runs itself (the sandbox): reached on
 * loopback whatever PLATFORM_ALLOW_PRIVATE_ENDPOINTS says, but only with its own token, so
 * registering its address with another credential reaches nothing.
 */
export async function trustOwnMember(deps: Deps, connection: ClusterConnection): Promise<void> {
  const key = ownKey(connection)
  if (!key) return
  deps.runtimes.of(OWN_MEMBERS).add(key)
  await deps.db.write((tx) => writeFact(tx, SHARED_OWN_MEMBER, sharedOwnFact(key)))
}

async function isOwnMember(deps: Deps, connection: ClusterConnection): Promise<boolean> {
  const key = ownKey(connection)
  if (key === undefined) return false
  return deps.runtimes.of(OWN_MEMBERS).has(key) || (await readFact(deps.db.read, SHARED_OWN_MEMBER)) === sharedOwnFact(key)
}

/** The egress policy as it stands now: private addresses while PLATFORM_ALLOW_PRIVATE_ENDPOINTS is on (or for an own member), metadata never. */
async function policyOf(deps: Deps, connection: ClusterConnection): Promise<EgressPolicy> {
  return { allowPrivate: deps.config.allowPrivateEndpoints || (await isOwnMember(deps, connection)), ...deps.network }
}

/**
 * Where a new connection to the member goes: its server's address, resolved and checked with the
 * egress policy now; or, for an agent cluster, this process's loopback relay into the agent's
 * tunnel (docs/agents.md), whose TLS still ends at the API server. Throws EgressRefused, and
 * unavailable when no agent of an agent cluster is connected.
 */
async function dialOf(deps: Deps, connection: ClusterConnection): Promise<Dialed> {
  const url = new URL(connection.server)
  const agent = connection.agent
  if (agent)
    return {
      address: '127.0.0.1',
      port: await agentTunnels(deps).relayPort(agent.clusterId, agent.name, () => agentLastSeen(deps.db.read, agent.clusterId)),
    }
  return { address: await resolveChecked(url, await policyOf(deps, connection)), port: portOf(url) }
}

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80)

/** Checks the server's address with the egress policy, as each connection will (registration's early word). Throws EgressRefused. */
export async function checkServerAddress(deps: Deps, connection: ClusterConnection): Promise<void> {
  await resolveChecked(new URL(connection.server), await policyOf(deps, connection))
}

/**
 * One finite call (anything but a watch, a followed log or an upgrade): status, headers, the body
 * as the member sent it (not decompressed), whole, or streamed when it is large and the call says
 * `large: 'stream'`. Throws upstream (unreachable, TLS refused, timeout, malformed answer, too
 * large to buffer), unavailable (the buffer budget is taken for now), invalid (a header or path
 * that cannot be written safely) and clientClosed.
 */
export async function callMember(
  deps: Deps,
  member: Member,
  call: MemberCall & { large: 'stream' },
): Promise<MemberAnswer | StreamedMemberAnswer>
export async function callMember(deps: Deps, member: Member, call: MemberCall): Promise<MemberAnswer>
export async function callMember(deps: Deps, member: Member, call: MemberCall): Promise<MemberAnswer | StreamedMemberAnswer> {
  try {
    return await poolOf(deps, member.connection).request({
      method: call.method ?? 'GET',
      path: call.path,
      headers: call.headers ?? {},
      body: call.body ?? null,
      timeoutMs: call.timeoutMs ?? MEMBER_TIMEOUT_MS,
      signal: call.signal,
      caller: call.caller,
      large: call.large,
    })
  } catch (error) {
    throw memberFailure(member.name, error)
  }
}

/**
 * GETs a JSON document. A status outside 2xx is `upstream` (worded by `refusals` when it names the
 * status, `{path}` replaced), as are a stalled or cut body and a body that is not JSON.
 */
export async function memberJson<T>(
  deps: Deps,
  member: Member,
  path: string,
  options: { timeoutMs?: number; refusals?: Record<number, string> } = {},
): Promise<T> {
  const answer = await callMember(deps, member, { path, headers: { accept: 'application/json' }, timeoutMs: options.timeoutMs })
  if (answer.status < 200 || answer.status >= 300) {
    const refusal = options.refusals?.[answer.status]
    throw new AppError(
      'upstream',
      refusal ? `cluster "${member.name}" ${refusal.replace('{path}', path)}` : MemberMessages.status(member.name, answer.status, path),
    )
  }
  try {
    return JSON.parse(new TextDecoder().decode(answer.body)) as T
  } catch {
    throw new AppError('upstream', MemberMessages.notJson(member.name, path))
  }
}

export interface MemberStreamRequest {
  method: string
  path: string
  /** A name with several values goes as one line per value, as on finite calls. */
  headers: RequestHeaders
  /** Ends the stream (the client went away); a stream has no timeout once its head came. */
  signal: AbortSignal
}

/**
 * A stream (a watch, a followed log): the member's answer with its body arriving as the member
 * sends it (bytes as sent), read as fast as its consumer takes it, over the pool's dial, TLS and
 * credential on a connection of its own (net/http1/pool.ts `stream`); cancelling the body closes
 * that connection. Throws upstream (unreachable, TLS refused, no head within MEMBER_TIMEOUT_MS,
 * malformed head), invalid (a header that cannot be written) and clientClosed.
 */
export async function streamMember(deps: Deps, member: Member, request: MemberStreamRequest): Promise<StreamedMemberAnswer> {
  try {
    return await poolOf(deps, member.connection).stream({
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: null,
      timeoutMs: MEMBER_TIMEOUT_MS,
      signal: request.signal,
    })
  } catch (error) {
    throw memberFailure(member.name, error)
  }
}

/**
 * Opens a WebSocket to the member (exec, attach, port-forward) offering `protocols`, over the same
 * dial as the pool (an agent cluster's relay included) with the cluster's credential and TLS
 * settings and the platform's `extraHeaders` (impersonation, one line per value: src/net/websocket.ts);
 * resolves once it is open, with the protocol the member chose. Rejects with NotUpgraded when the
 * member does not switch protocols (or a connection error), and with upstream when its address is
 * refused or the handshake is not done within HANDSHAKE_TIMEOUT_MS (the connection is closed then,
 * so a member that never answers holds no descriptor); invalid for a header that cannot be written.
 */
export async function openMemberWebSocket(
  deps: Deps,
  member: Member,
  path: string,
  protocols: string[],
  extraHeaders: RequestHeaders,
): Promise<ClientWebSocket> {
  const url = new URL(member.connection.server)
  const dialed = await dialOf(deps, member.connection).catch((error: unknown) => {
    throw memberFailure(member.name, error)
  })
  const { authorization, tls } = credentialsOf(member.connection)
  let abort = () => {}
  const cancel = deps.runtimes.of(HANDSHAKES).add(deps.clock.now() + HANDSHAKE_TIMEOUT_MS, () => abort())
  let timedOutNow = false
  try {
    return await openWebSocket(
      {
        dialed,
        tls: url.protocol === 'https:' ? tls : undefined,
        hostHeader: url.host,
        path: `${url.pathname === '/' ? '' : url.pathname}${path}`,
        headers: extraHeaders,
        authorization,
        protocols,
      },
      (end) => {
        abort = () => {
          timedOutNow = true
          end()
        }
      },
    )
  } catch (error) {
    if (timedOutNow) throw memberFailure(member.name, timedOut())
    if (error instanceof UnsafeRequest) throw memberFailure(member.name, error)
    throw error
  } finally {
    cancel()
  }
}

/**
 * `; its certificate is issued to CN=… by CN=…` for the member's server certificate, read without
 * verifying it (to explain a TLS refusal); '' when it cannot be read or the address is refused.
 */
export async function describeMemberCertificate(deps: Deps, connection: ClusterConnection): Promise<string> {
  const url = new URL(connection.server)
  const pinned = await pin(url, await policyOf(deps, connection)).catch(() => undefined)
  if (!pinned) return ''
  return new Promise((resolve) => {
    const socket = connect(
      {
        host: pinned.address,
        port: Number(url.port || 443),
        servername: connection.tlsServerName || pinned.tlsName,
        rejectUnauthorized: false,
      },
      () => {
        const cert = socket.getPeerCertificate()
        socket.destroy()
        const names = cert.subjectaltname ? ` (${cert.subjectaltname})` : ''
        resolve(cert.subject ? `; its certificate is issued to ${dn(cert.subject)}${names} by ${dn(cert.issuer)}` : '')
      },
    )
    socket.setTimeout(2000, () => {
      socket.destroy()
      resolve('')
    })
    socket.on('error', () => resolve(''))
  })
}

const dn = (name: Record<string, string | string[] | undefined> | undefined) =>
  Object.entries(name ?? {})
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : (v ?? '')}`)
    .join(', ') || 'an unnamed subject'

/**
 * The cluster's credential as a bearer header or a client certificate, and the TLS settings that
 * check the server: its CA, and the name its certificate must carry (tlsServerName, else the
 * server's host name: the connection goes to an address, which is not that name).
 */
function credentialsOf(connection: ClusterConnection): { authorization: string | undefined; tls: OriginTls } {
  const credential = connection.credential
  const serverName = connection.tlsServerName || tlsNameOf(new URL(connection.server))
  return {
    authorization: 'token' in credential ? `Bearer ${credential.token}` : undefined,
    tls: {
      ...(connection.caData ? { ca: connection.caData } : {}),
      ...('clientCertificate' in credential ? { cert: credential.clientCertificate, key: credential.clientKey } : {}),
      ...(serverName ? { serverName } : {}),
      rejectUnauthorized: !connection.insecureSkipTlsVerify,
    },
  }
}

/** The kept-alive pool of `connection` (made on first use). */
const poolOf = (deps: Deps, connection: ClusterConnection) =>
  deps.runtimes.of(MEMBER_POOLS).of(connection, () => originOf(deps, connection))

/** Where the pool of `connection` connects and what each of its requests carries. Throws UnsafeRequest (a credential with a line break). */
function originOf(deps: Deps, connection: ClusterConnection): Origin {
  const url = new URL(connection.server)
  const secure = url.protocol === 'https:'
  const { authorization, tls } = credentialsOf(connection)
  return {
    dial: () => dialOf(deps, connection),
    tls: secure ? tls : undefined,
    hostHeader: url.host,
    basePath: url.pathname === '/' ? '' : url.pathname,
    fixedHeaders: authorization ? headerLine('authorization', authorization) : '',
  }
}
