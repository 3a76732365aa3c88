import { AppError } from '../http/errors'
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
  const credential = connection.credential
  if ('token' in credential) headers.set('authorization', `Bearer ${credential.token}`)
  const tls = {
    ...(connection.caData ? { ca: connection.caData } : {}),
    ...('clientCertificate' in credential ? { cert: credential.clientCertificate, key: credential.clientKey } : {}),
    ...(connection.tlsServerName ? { serverName: connection.tlsServerName } : {}),
    rejectUnauthorized: !connection.insecureSkipTlsVerify,
  }
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

const networkFailure = (clusterName: string, error: unknown) => {
  const reason = error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached'
  return new AppError('upstream', `cluster "${clusterName}" ${reason}`)
}

/** GETs a JSON document from the member cluster; a non-2xx answer, a stalled or cut body and a body that is not JSON are `upstream`. */
export async function memberJson<T>(clusterName: string, connection: ClusterConnection, path: string, timeoutMs = MEMBER_TIMEOUT_MS): Promise<T> {
  const res = await memberFetch(clusterName, connection, { path, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) })
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
