import type { LargeAnswers } from './answer'

/** Where a kept-alive pool sends its requests, and what each request carries besides its own headers. */
export interface Origin {
  /**
   * The address and port to connect to, asked afresh for each new connection: the owner resolves
   * the host name and checks the answer then (its egress policy), so no connection goes where the
   * policy does not allow at that moment, whatever the name resolved to before; or it names a
   * relay (an agent cluster's tunnel). Throws to refuse.
   */
  dial(): Promise<Dialed>
  /**
   * TLS settings (CA, client certificate, whether to verify, and the server name: SNI and the name
   * the certificate must carry, as the address dialled is not it); undefined for plain HTTP.
   */
  tls: OriginTls | undefined
  /** The Host header: the URL's host and port. */
  hostHeader: string
  /** The URL's path, prefixed to every request path ('' for the root). */
  basePath: string
  /** Header lines (`name: value\r\n`) every request carries, such as the credential; already checked by encodeRequest's rules. */
  fixedHeaders: string
}

export interface Dialed {
  address: string
  port: number
}

export interface OriginTls {
  ca?: string
  cert?: string
  key?: string
  serverName?: string
  rejectUnauthorized: boolean
}

/**
 * A request's headers: a name with several values is written as one line per value (a Kubernetes
 * server reads each `Impersonate-Group` line as one group; `a, b` on one line is one group).
 */
export type RequestHeaders = Record<string, string | readonly string[]>

export interface PoolRequest {
  method: string
  /** Path below the origin's base path, starting with `/`, percent-encoded (and query). */
  path: string
  headers: RequestHeaders
  body: Uint8Array | null
  timeoutMs: number
  /** Who the call is for (a user): the connections one caller holds at once are bounded (pool.ts). Calls without one count as one caller. */
  caller?: string
  /** How an answer too large to buffer is taken (answer.ts): as a stream, or refused (the default). */
  large?: LargeAnswers
  /**
   * The client's request: once it has gone away the call ends at the next sweep (an abort listener
   * per request cost a tenth of the relay's CPU) and its connection is closed.
   */
  signal?: AbortSignal
}

/** A header or path that cannot be written safely (a line break, a control character, a bad name). */
export class UnsafeRequest extends Error {}

/** Bytes not allowed in a request line or header value we write (CR, LF, NUL and other controls but tab). */
const UNSAFE_TEXT = /[\u0000-\u0008\u000a-\u001f\u007f]/
/** A request target is visible ASCII only (RFC 9112 §3.2): anything else would be mangled on the wire or split the line. */
const UNSAFE_PATH = /[^\u0021-\u007e]/
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Headers the client writes itself: a caller's would change the framing or the target. */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'authorization'])

/** One header line for Origin.fixedHeaders. Throws UnsafeRequest. */
export function headerLine(name: string, value: string): string {
  if (!TOKEN.test(name) || UNSAFE_TEXT.test(value)) throw new UnsafeRequest('unsafe header')
  return `${name}: ${value}\r\n`
}

/**
 * The request's bytes: request line, Host, the caller's headers (one line per value; but those
 * the client writes itself), the origin's fixed headers, the length. Throws UnsafeRequest.
 */
export function encodeRequest(origin: Origin, request: PoolRequest): Uint8Array {
  if (!TOKEN.test(request.method) || UNSAFE_PATH.test(request.path) || !request.path.startsWith('/')) throw new UnsafeRequest('unsafe path')
  let head = `${request.method} ${origin.basePath}${request.path} HTTP/1.1\r\nhost: ${origin.hostHeader}\r\n`
  for (const name in request.headers) {
    const values = request.headers[name]!
    if (!TOKEN.test(name)) throw new UnsafeRequest('unsafe header')
    const own = OWN_HEADERS.has(name.toLowerCase())
    for (const value of typeof values === 'string' ? [values] : values) {
      if (UNSAFE_TEXT.test(value)) throw new UnsafeRequest('unsafe header')
      if (!own) head += `${name}: ${value}\r\n`
    }
  }
  head += origin.fixedHeaders
  if (request.body) head += `content-length: ${request.body.length}\r\n`
  else if (request.method !== 'GET' && request.method !== 'HEAD') head += 'content-length: 0\r\n'
  head += '\r\n'
  const headBytes = Buffer.from(head, 'latin1')
  return request.body && request.body.length > 0 ? Buffer.concat([headBytes, request.body]) : headBytes
}
