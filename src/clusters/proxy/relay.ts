import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { PLATFORM_QUERY_PARAMETERS } from '../../http/auth'
import { pathSegmentErrors } from '../../kube'
import type { RequestHeaders } from '../../net/http1/request'
import type { ClusterConnection } from '../connection'
import { callMember, MEMBER_TIMEOUT_MS, type Member, type MemberCall, streamMember } from '../member/client'
import { MemberMessages } from '../member/failures'

/**
 * Request headers a client may have passed on to the member cluster. Everything else stays here:
 * the platform's own credentials (Authorization, Cookie), Impersonate-* (the platform decides who
 * the cluster sees), hop-by-hop and Connection-named headers, Host and X-Forwarded-*.
 */
const FORWARDED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'content-type',
  'content-encoding',
  'user-agent',
  'if-none-match',
  'if-match',
  'kubectl-command',
  'kubectl-session',
  'x-stream-protocol-version',
])

/**
 * Response headers passed back; the cluster's cookies, auth challenges, hop-by-hop headers and
 * its own say on how a browser treats the answer (CONFINED decides that) are not.
 */
const RELAYED_RESPONSE_HEADERS = [
  'content-type',
  'content-encoding',
  'content-length',
  'cache-control',
  'etag',
  'warning',
  'audit-id',
  'x-kubernetes-pf-flowschema-uid',
  'x-kubernetes-pf-prioritylevel-uid',
] as const

/**
 * What every proxied answer carries, whatever the member sent: anyone may register a cluster they
 * control and send a link to it, and nothing it answers may run as a page on the platform's
 * origin (with the signed-in user's cookie). No resource loads, no script runs, the page is a
 * sandbox of its own origin, and the browser takes the declared type at its word.
 */
export const CONFINED: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
}

/** Media types a browser shows as data, never renders as a page: JSON, YAML, protobuf, plain text (Kubernetes' watch and stream types are these with parameters). */
const DATA_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'application/protobuf',
  'application/x-protobuf',
  'application/vnd.kubernetes.protobuf',
  'text/plain',
])
const DATA_SUFFIX = /\+(?:json|yaml|protobuf)$/

/** The media type of a Content-Type value, without its parameters, lower-case; '' for none. */
export function mediaTypeOf(contentType: string | null): string {
  if (!contentType) return ''
  const semicolon = contentType.indexOf(';')
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase()
}

/** True when `contentType` (the header's value) names data; an answer without a type is no data a browser may guess at. */
function isData(contentType: string | null): boolean {
  const media = mediaTypeOf(contentType)
  return DATA_TYPES.has(media) || DATA_SUFFIX.test(media)
}

const RelayMessages = {
  badSegment: (segment: string, why: string) => `invalid path segment ${JSON.stringify(segment)}: ${why}`,
  redirect: (cluster: string, status: number) =>
    `cluster "${cluster}" answered with a redirect (${status}), which the platform does not follow`,
  outsideRoot: "the request path leaves the cluster's API root",
} as const

const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/

/**
 * The raw path segments after a prefix, each decoded once, checked as a Kubernetes path segment
 * (no '.', '..', '/', '%', control characters: an encoded `..`, `%2f` or `%00` is refused) and
 * encoded again. Throws invalid.
 */
export function safeSegments(rawPath: string): string[] {
  return rawPath
    .split('/')
    .filter((s) => s !== '')
    .map((raw) => {
      // Unreserved characters only: decoding and encoding again give the same text.
      if (PLAIN_SEGMENT.test(raw) && raw !== '.' && raw !== '..') return raw
      let segment: string
      try {
        segment = decodeURIComponent(raw)
      } catch {
        throw new AppError('invalid', RelayMessages.badSegment(raw, 'malformed percent-encoding'))
      }
      const problems = pathSegmentErrors(segment)
      if (/[\u0000-\u001f\u007f]/.test(segment)) problems.push('may not contain control characters')
      if (problems.length > 0) throw new AppError('invalid', RelayMessages.badSegment(segment, problems.join(', ')))
      return encodeURIComponent(segment)
    })
}

/** The name of a `name=value` query pair, decoded as URLSearchParams decodes it (which is how the platform reads it). */
function queryName(pair: string): string {
  const equals = pair.indexOf('=')
  const name = equals < 0 ? pair : pair.slice(0, equals)
  return name.includes('%') || name.includes('+') ? (new URLSearchParams(`${name}=`).keys().next().value ?? name) : name
}

/**
 * The query for the member: `search` without the platform's own parameters (a platform token,
 * sudo), whose values would otherwise land in the member's logs. The other pairs stay as sent.
 */
export function memberSearch(search: string): string {
  if (search.length <= 1) return search
  const pairs = search.slice(1).split('&')
  const kept = pairs.filter((pair) => !PLATFORM_QUERY_PARAMETERS.has(queryName(pair)))
  if (kept.length === pairs.length) return search
  return kept.length > 0 ? `?${kept.join('&')}` : ''
}

/**
 * `/` + the segments + the member's part of `search`, after checking the resulting URL stays
 * under the cluster's server URL. Throws invalid.
 */
export function upstreamPath(connection: ClusterConnection, segments: string[], search: string): string {
  const path = `/${segments.join('/')}${memberSearch(search)}`
  const root = apiRootOf(connection)
  const target = new URL(`${connection.server}${path}`)
  if (target.origin !== root.origin || !target.pathname.startsWith(root.pathPrefix))
    throw new AppError('invalid', RelayMessages.outsideRoot)
  return path
}

const apiRoots = new WeakMap<ClusterConnection, { origin: string; pathPrefix: string }>()

/** The origin and path (ending in `/`) every upstream URL of the cluster must stay under; parsed once per connection. */
function apiRootOf(connection: ClusterConnection): { origin: string; pathPrefix: string } {
  let root = apiRoots.get(connection)
  if (!root) {
    const url = new URL(connection.server)
    apiRoots.set(connection, (root = { origin: url.origin, pathPrefix: url.pathname.replace(/\/?$/, '/') }))
  }
  return root
}

/** The allow-listed request headers of `request`, plus what the platform adds (impersonation). */
export function forwardedHeaders(request: Request, extra: RequestHeaders = {}): RequestHeaders {
  const headers: RequestHeaders = {}
  // One pass over what the client sent (a handful of headers) rather than a lookup per allowed name.
  for (const [name, value] of request.headers) if (FORWARDED_REQUEST_HEADERS.has(name)) headers[name] = value
  return Object.assign(headers, extra)
}

/** The body to send upstream: the stream as the client sent it, or the JSON the app already parsed. */
export function upstreamBody(request: Request, parsed: unknown): BodyInit | null {
  if (request.method === 'GET' || request.method === 'HEAD') return null
  if (!request.bodyUsed) return request.body
  return parsed === undefined ? null : JSON.stringify(parsed)
}

export interface RelayRequest {
  method: string
  path: string
  headers: RequestHeaders
  body: BodyInit | null
  /** A watch or a followed log (a GET: no body is sent): no timeout once the head came; ends when the client goes away. */
  streaming: boolean
  /** The client request's signal: its abort (the client went away) ends the member's call or stream. */
  clientSignal?: AbortSignal
  /**
   * A finite answer the platform reads itself (a composite route parses it): kept whole, and refused
   * when too large to buffer. Otherwise a large answer is passed on as a stream.
   */
  whole?: boolean
  /** Who the call is for (callerOf): their share of the cluster's connections and of the answer buffer. */
  caller?: string
}

/** Finite relays give up after this long (a large list may take a while). */
const RELAY_TIMEOUT_MS = MEMBER_TIMEOUT_MS * 3

/** A stream without a client signal still has no timeout. */
const UNENDING = new AbortController().signal

const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304

/** Methods that change nothing at the member: sent at once, whatever happens to their client. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Lets the event loop turn once, then throws clientClosed if the client's connection is gone. Bun
 * closes a connection, answering nothing, when a request is pipelined behind one still being
 * answered, and the request's abort comes a turn after the pipelined request was read: a change
 * sent before that turn would run at the member with its answer lost (docs/api/proxy.md).
 */
async function clientStillThere(member: Member, signal: AbortSignal): Promise<void> {
  await new Promise((turned) => setImmediate(turned))
  if (signal.aborted) throw new AppError('clientClosed', MemberMessages.clientGone(member.name))
}

/**
 * Sends one request to the member and hands back its answer unchanged: status, allow-listed
 * headers, the bytes as sent (still compressed). A stream (watch, followed log) is piped without
 * buffering; a finite request goes over the kept-alive pool and comes back whole when small, else
 * streamed as the client reads it (unless `whole`: then too large is upstream or unavailable). A redirect is
 * not followed nor relayed (502). Throws upstream (unreachable, timeout, malformed answer) and
 * clientClosed (the client went away before a finite answer came).
 */
export async function relay(deps: Deps, member: Member, request: RelayRequest): Promise<Response> {
  if (!request.streaming) {
    const body = request.body === null ? null : await new Response(request.body).bytes()
    if (!SAFE_METHODS.has(request.method) && request.clientSignal) await clientStillThere(member, request.clientSignal)
    const call: MemberCall = {
      method: request.method,
      path: request.path,
      headers: request.headers,
      body,
      timeoutMs: RELAY_TIMEOUT_MS,
      signal: request.clientSignal,
      caller: request.caller,
    }
    const answer = request.whole ? await callMember(deps, member, call) : await callMember(deps, member, { ...call, large: 'stream' })
    if (isRedirect(answer.status)) {
      if (answer.body instanceof ReadableStream) await answer.body.cancel()
      throw new AppError('upstream', RelayMessages.redirect(member.name, answer.status))
    }
    return new Response(answer.body, { status: answer.status, headers: relayedHeaders(answer.headers) })
  }
  const answer = await streamMember(deps, member, {
    method: request.method,
    path: request.path,
    headers: request.headers,
    signal: request.clientSignal ?? UNENDING,
  })
  if (isRedirect(answer.status)) {
    await answer.body.cancel()
    throw new AppError('upstream', RelayMessages.redirect(member.name, answer.status))
  }
  return new Response(endingWhenCut(answer.body), { status: answer.status, headers: relayedHeaders(answer.headers) })
}

/**
 * The member's stream, ending cleanly when the member cuts it (restart, network): the client sees
 * a watch or a followed log end, as when the apiserver closes one, and re-watches, instead of a
 * broken response and an error the server cannot attribute.
 */
function endingWhenCut(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = stream.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) controller.close()
        else controller.enqueue(value)
      } catch {
        controller.close()
      }
    },
    // The client went away: the member's request ends with it.
    cancel: (reason) => reader.cancel(reason),
  })
}

/**
 * The allow-listed response headers of a member's answer, confined (CONFINED); an answer that is
 * not data (a page, an image, a script, no type at all) is a download (`Content-Disposition:
 * attachment`), never shown inline.
 */
function relayedHeaders(from: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { ...CONFINED }
  for (const name of RELAYED_RESPONSE_HEADERS) {
    const value = from[name]
    if (value !== undefined) headers[name] = value
  }
  if (!isData(headers['content-type'] ?? null)) headers['content-disposition'] = 'attachment'
  return headers
}

/** True for requests that stream: watches, followed logs, and the upgrade-based verbs. */
export function isStreaming(method: string, segments: string[], query: URLSearchParams): boolean {
  const flag = (name: string) => ['true', '1'].includes(query.get(name) ?? '')
  const last = segments.at(-1) ?? ''
  return (
    method === 'GET' && (flag('watch') || flag('follow') || segments.includes('watch') || ['exec', 'attach', 'portforward'].includes(last))
  )
}
