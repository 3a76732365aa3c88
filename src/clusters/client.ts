import { AppError } from '../errors'
import type { ClusterConnection } from './connection'

/** Requests to member clusters give up after this long unless the caller streams. */
export const MEMBER_TIMEOUT_MS = 10_000

export interface MemberRequest {
  method?: string
  /** Path below the server URL, starting with `/`, already percent-encoded per segment. */
  path: string
  headers?: Record<string, string>
  body?: BodyInit | null
  /** Abort on this signal instead of the default timeout (streams). */
  signal?: AbortSignal
  /** Relay mode: keep the body compressed as the cluster sent it (with its Content-Encoding). */
  raw?: boolean
}

/**
 * The one way to call a member cluster: TLS with the cluster's CA (or system roots), its bearer
 * token or client certificate, no redirects followed. Network failures become `upstream` errors that name the cluster, never its credential.
 */
export async function memberFetch(clusterName: string, connection: ClusterConnection, request: MemberRequest): Promise<Response> {
  const headers = new Headers(request.headers)
  const { authorization, tls } = credentialsOf(connection)
  if (authorization) headers.set('authorization', authorization)
  try {
    return await fetch(`${connection.server}${request.path}`, {
      method: request.method ?? 'GET',
      headers,
      body: request.body,
      redirect: 'manual',
      decompress: !request.raw,
      tls,
      signal: request.signal ?? AbortSignal.timeout(MEMBER_TIMEOUT_MS),
    } as RequestInit)
  } catch (error) {
    throw networkFailure(clusterName, error)
  }
}

/**
 * The cluster's credential as a bearer header or a client certificate, and the TLS settings that
 * check the server; one object per connection, so Bun's fetch sees the same TLS settings and
 * keeps reusing its pooled connection instead of a new TLS handshake per request.
 */
const credentialsCache = new WeakMap<ClusterConnection, ReturnType<typeof credentialsFor>>()
export function credentialsOf(connection: ClusterConnection) {
  let found = credentialsCache.get(connection)
  if (!found) credentialsCache.set(connection, (found = credentialsFor(connection)))
  return found
}

function credentialsFor(connection: ClusterConnection) {
  const credential = connection.credential
  return {
    authorization: 'token' in credential ? `Bearer ${credential.token}` : undefined,
    tls: {
      ...(connection.caData ? { ca: connection.caData } : {}),
      ...('clientCertificate' in credential ? { cert: credential.clientCertificate, key: credential.clientKey } : {}),
      ...(connection.tlsServerName ? { serverName: connection.tlsServerName } : {}),
      rejectUnauthorized: !connection.insecureSkipTlsVerify,
    },
  }
}

/**
 * Opens a WebSocket to the member (exec, attach) offering `protocols`, with the cluster's
 * credential and TLS settings and the platform's `extraHeaders` (impersonation); resolves once it
 * is open, with the protocol the member chose. Rejects when the member does not switch protocols.
 */
export function memberWebSocket(
  connection: ClusterConnection,
  path: string,
  protocols: string[],
  extraHeaders: Record<string, string>,
): Promise<WebSocket> {
  const { authorization, tls } = credentialsOf(connection)
  const options: Bun.WebSocketOptions = { protocols, headers: { ...extraHeaders, ...(authorization ? { authorization } : {}) }, tls }
  const socket = new BunWebSocket(`${connection.server.replace(/^http/, 'ws')}${path}`, options)
  socket.binaryType = 'arraybuffer'
  return new Promise((resolve, reject) => {
    socket.addEventListener('open', () => resolve(socket), { once: true })
    socket.addEventListener('error', () => reject(new Error('the member did not switch protocols')), { once: true })
  })
}

/** Bun's WebSocket client, which takes headers and TLS options (the DOM typing of the global knows only protocols). */
const BunWebSocket = WebSocket as unknown as new (url: string, options: Bun.WebSocketOptions) => WebSocket

/** What a failed connection means, by the error code Bun's fetch reports, in words a person can act on. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'refused the connection (is the API server running on that port?)',
  ENOTFOUND: 'could not be found: its host name does not resolve (DNS)',
  EAI_AGAIN: 'could not be found: DNS did not answer',
  ECONNRESET: 'closed the connection',
  EPROTO: 'broke off the TLS handshake (does it want a client certificate, or is it not TLS?)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'presented a TLS certificate that the configured certificate authority did not sign',
  SELF_SIGNED_CERT_IN_CHAIN: 'presented a TLS certificate that the configured certificate authority did not sign',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'presented a self-signed TLS certificate that is not the configured certificate authority',
  ERR_TLS_CERT_ALTNAME_INVALID: 'presented a TLS certificate for another name (set tlsServerName to the name it was issued for)',
  CERT_HAS_EXPIRED: 'presented an expired TLS certificate',
}

/** The TLS error codes of NETWORK_REASONS: the caller may want to show the certificate's subject. */
export const isTlsFailure = (error: AppError) => error.message.includes('TLS certificate')

export const networkFailure = (clusterName: string, error: unknown) => {
  const code = (error as { code?: unknown }).code
  const reason =
    error instanceof Error && error.name === 'TimeoutError'
      ? 'did not answer in time'
      : (typeof code === 'string' && NETWORK_REASONS[code]) || 'could not be reached'
  return new AppError('upstream', `cluster "${clusterName}" ${reason}`)
}

/** GETs a JSON document from the member cluster; a non-2xx answer, a stalled or cut body and a body that is not JSON are `upstream`. */
export async function memberJson<T>(
  clusterName: string,
  connection: ClusterConnection,
  path: string,
  timeoutMs = MEMBER_TIMEOUT_MS,
): Promise<T> {
  const res = await memberFetch(clusterName, connection, {
    path,
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (!res.ok) {
    await res.body?.cancel()
    throw new AppError('upstream', `cluster "${clusterName}" answered ${res.status} for ${path}`)
  }
  // The timeout also covers the body: headers alone do not make an answer.
  let text: string
  try {
    text = await res.text()
  } catch (error) {
    throw networkFailure(clusterName, error)
  }
  try {
    return JSON.parse(text) as T
  } catch {
    throw new AppError('upstream', `cluster "${clusterName}" answered ${path} with something that is not JSON`)
  }
}
