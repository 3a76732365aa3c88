import { Elysia } from 'elysia'
import { parseQuery } from 'elysia/parse-query'
import { AppError } from '../errors'
import type { RequestIpSource } from './client-address'

export const Messages = {
  textPlain: 'text/plain bodies are not accepted; send application/json',
  jsonOnly: 'this route reads application/json bodies only',
  tooLarge: (limit: number) => `request body larger than ${limit} bytes`,
  anonymousTooLarge: (limit: number) => `request bodies without a credential are limited to ${limit} bytes; authenticate first`,
  lengthRequired: 'a request body without a credential needs a Content-Length header',
  stalled: (seconds: number) => `the request body did not arrive within ${seconds} seconds`,
  notUtf8: 'the request body is not valid UTF-8 text',
} as const

/** Sign-in and the other public routes read a few hundred bytes; nobody needs more before proving who they are. */
export const ANONYMOUS_BODY_BYTES = 64 * 1024

export interface BodyLimits {
  /** Largest body of a request with a valid credential. */
  maxBytes: number
  /** Seconds a JSON body may take to arrive in full. */
  timeoutSeconds: number
}

/** Deeper than any Kubernetes object or API body; shallow enough that nothing recurses into a crash. */
export const MAX_JSON_DEPTH = 128

/** Throws `invalid` when the JSON text nests deeper than `limit`; a linear scan, strings skipped. */
function checkJsonDepth(text: string, limit = MAX_JSON_DEPTH): void {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > limit) throw new AppError('invalid', `JSON nesting deeper than ${limit} levels is not accepted`)
    } else if (c === 93 || c === 125) depth--
  }
}

/** Parses a JSON body under the depth cap; empty text is no body, bad JSON is `invalid`. */
function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined
  checkJsonDepth(text)
  try {
    return JSON.parse(text)
  } catch {
    throw new AppError('invalid', 'The request body is not valid JSON')
  }
}

/**
 * A body that could not be read. Parsing runs before authentication in Elysia's lifecycle, so the
 * failure is kept here and thrown by the guard once the caller is known: a bad credential is 401
 * even when the body is bad too (docs/decisions.md §1).
 */
class UnreadableBody {
  constructor(readonly error: AppError) {}
}

/**
 * A body handed to its route as text, read within the same limits as any other (size, arrival
 * time, UTF-8): for routes that parse it themselves, a piece at a time (usage ingestion), so a body
 * of many small items does not become as many objects at once.
 */
export class BodyText {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

/** Throws the parse failure kept in `body`, if any. */
export function rejectUnreadableBody(body: unknown): void {
  if (body instanceof UnreadableBody) throw body.error
}

const isJson = (contentType: string) => /^application\/([\w.+-]*\+)?json\b/i.test(contentType)
const isUrlEncoded = (contentType: string) => /^application\/x-www-form-urlencoded\b/i.test(contentType)

/**
 * For public routes that read JSON only (sign-in): a form or multipart body is 415, so a
 * cross-site HTML form cannot post to them (login CSRF). Throws unsupportedMediaType.
 */
export function assertJsonBody(request: Request): void {
  if (request.body !== null && !isJson(request.headers.get('content-type') ?? ''))
    throw new AppError('unsupportedMediaType', Messages.jsonOnly)
}

/**
 * Reads a body as text, refusing it past `maxBytes` (payloadTooLarge) or when it has not arrived
 * within `timeoutSeconds` (requestTimeout): a client trickling a body holds at most the limit,
 * and not for long.
 */
async function readBodyText(request: Request, maxBytes: number, tooLarge: string, timeoutSeconds: number): Promise<string> {
  const reader = request.body?.getReader()
  if (!reader) return ''
  let stalled = false
  const timer = setTimeout(() => {
    stalled = true
    reader.cancel().catch(() => {})
  }, timeoutSeconds * 1000)
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (stalled) throw new AppError('requestTimeout', Messages.stalled(timeoutSeconds))
      if (done) break
      size += value.byteLength
      if (size > maxBytes) {
        await reader.cancel()
        throw new AppError('payloadTooLarge', tooLarge)
      }
      chunks.push(value)
    }
  } finally {
    clearTimeout(timer)
  }
  // Strict: a lossy decoding would store U+FFFD where the client sent something else.
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
  } catch {
    throw new AppError('invalid', Messages.notUtf8)
  }
}

/** Who sent the request (undefined: nobody); throws for a credential that is present but invalid. */
type ActorOf = (request: Request, server: RequestIpSource) => Promise<unknown>

/**
 * JSON bodies are parsed here rather than by Elysia, to bound their size, depth and arrival time
 * (a 100k-deep array would otherwise blow the stack in validation). The caller is authenticated
 * first: a bad credential is 401 before a byte of body is read, and a request without one may
 * send at most ANONYMOUS_BODY_BYTES, so stalled anonymous bodies cannot pile up memory. No route
 * reads text/plain: it is refused (415) rather than handed to a JSON schema as a string, which is
 * also what a cross-site form can send. URL-encoded forms are read the same way; multipart falls
 * through to Elysia within the same declared-size limits. Every text body must be valid UTF-8
 * (422). `textRoutes` (`METHOD /path` as declared) get their body as BodyText, whatever its type.
 */
export const jsonBody = (limits: BodyLimits, actorOf: ActorOf, textRoutes: ReadonlySet<string> = new Set()) =>
  new Elysia({ name: 'json-body' }).onParse({ as: 'global' }, ({ request, contentType, server, route }) => {
    // No body (every GET): nothing to read or bound, and no promise to wait on.
    if (contentType === '' && request.body === null) return undefined
    if (/^text\/plain\b/i.test(contentType)) return new UnreadableBody(new AppError('unsupportedMediaType', Messages.textPlain))
    return parseBody(request, contentType, server, limits, actorOf, textRoutes.has(`${request.method} ${route}`))
  })

/** The body read within the caller's limits (anonymous callers get the smaller one); a refusal is kept for the guard. */
async function parseBody(
  request: Request,
  contentType: string,
  server: RequestIpSource,
  limits: BodyLimits,
  actorOf: ActorOf,
  asText: boolean,
): Promise<unknown> {
  const authenticated = (await actorOf(request, server)) !== undefined
  try {
    const read = { maxBytes: authenticated ? limits.maxBytes : ANONYMOUS_BODY_BYTES, timeoutSeconds: limits.timeoutSeconds }
    return await readBody(request, contentType, read, authenticated, asText)
  } catch (e) {
    // Kept for the guard, so that a signed-in route still answers an anonymous caller 401.
    if (e instanceof AppError) return new UnreadableBody(e)
    throw e
  }
}

/**
 * The parsed body, the BodyText of a route that parses its own (`asText`), or undefined to let
 * Elysia read it (multipart); throws AppError for a body refused.
 */
async function readBody(
  request: Request,
  contentType: string,
  limits: BodyLimits,
  authenticated: boolean,
  asText: boolean,
): Promise<unknown> {
  const tooLarge = authenticated ? Messages.tooLarge(limits.maxBytes) : Messages.anonymousTooLarge(limits.maxBytes)
  const declared = request.headers.get('content-length')
  if (Number(declared ?? '0') > limits.maxBytes) throw new AppError('payloadTooLarge', tooLarge)
  const form = isUrlEncoded(contentType)
  if (!isJson(contentType) && !form && !asText) {
    // Elysia reads multipart bodies whole: without a declared size, an anonymous one could be any size.
    if (!authenticated && declared === null && request.body) throw new AppError('lengthRequired', Messages.lengthRequired)
    return undefined
  }
  const text = await readBodyText(request, limits.maxBytes, tooLarge, limits.timeoutSeconds)
  if (asText) return new BodyText(contentType, text)
  // The parser Elysia itself uses for forms, so routes see the same shape.
  return form ? parseQuery(text) : parseJson(text)
}
