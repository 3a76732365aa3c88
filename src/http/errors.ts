import { Elysia, type ValidationError } from 'elysia'
import { AppError, type ErrorKind, type FieldError } from '../errors'
import type { Logger } from '../logger'
import { isDatabaseUnavailable } from '../storage/database'
import { JSON_TYPE, jsonAnswer } from './json-answer'
import { unservedMethod } from './methods'
import { requestIdOfRequest } from './request-log'
import { pathOf } from './routable-url'

const STATUS: Record<ErrorKind, number> = {
  badRequest: 400,
  invalid: 422,
  duplicate: 422,
  unauthenticated: 401,
  forbidden: 403,
  notFound: 404,
  methodNotAllowed: 405,
  requestTimeout: 408,
  conflict: 409,
  lengthRequired: 411,
  payloadTooLarge: 413,
  unsupportedMediaType: 415,
  tooManyRequests: 429,
  // nginx's "client closed request": nobody receives it; the request log says why the call ended.
  clientClosed: 499,
  internal: 500,
  upstream: 502,
  unavailable: 503,
}

/** The HTTP status of an error kind; the only table that knows them. */
export const statusOf = (kind: ErrorKind) => STATUS[kind]

/** The body every non-2xx answer carries (docs/decisions.md §1). */
export interface ErrorBody {
  message: string
  url: string
  errors?: FieldError[]
}

/** A Kubernetes `Status`: what kubectl and client libraries read from a failed call (docs/decisions.md §12). */
export interface KubernetesStatus {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, never>
  status: 'Failure'
  message: string
  reason: string
  code: number
}

/** The apiserver's `reason` for each status the platform answers with (k8s.io/apimachinery StatusReason). */
const KUBERNETES_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'Timeout',
  409: 'Conflict',
  411: 'BadRequest',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
}

/** The kubectl endpoint (`/api/v1/clusters/{owner}/{cluster}/k8s/…`): its failures are Kubernetes Status bodies. */
const KUBECTL_PATH = /^\/api\/v1\/clusters\/[^/]+\/[^/]+\/k8s(?:\/|$)/

/** The body of a failure: a Status on the kubectl endpoint, else the error body; `docsUrl` points at the OpenAPI document. */
function errorBody(
  request: Request,
  status: number,
  message: string,
  docsUrl: string,
  fields: FieldError[] = [],
): ErrorBody | KubernetesStatus {
  if (KUBECTL_PATH.test(pathOf(request.url))) {
    const detail = fields.length > 0 ? `${message}: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}` : message
    const reason = KUBERNETES_REASONS[status] ?? 'InternalError'
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: detail, reason, code: status }
  }
  const body: ErrorBody = { message, url: docsUrl }
  if (fields.length > 0) body.errors = fields
  return body
}

export const Messages = {
  databaseUnavailable: 'the database cannot be reached right now; nothing was changed, retry shortly',
} as const

/** Seconds a client is asked to wait when the database cannot answer. */
const DATABASE_RETRY_AFTER_SECONDS = '5'

/**
 * The AppError an answer is made from: the error itself, or 503 with Retry-After for a database
 * that cannot answer now (a write is one transaction, so a failed one left nothing behind).
 */
function knownError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error
  if (isDatabaseUnavailable(error))
    return new AppError('unavailable', Messages.databaseUnavailable, [], { 'retry-after': DATABASE_RETRY_AFTER_SECONDS })
  return undefined
}

/** The log line of a failure the server did not expect: the request id to find it by, never the request's secrets. */
export function logUnexpected(log: Logger, request: Request, error: unknown): void {
  log.error('unexpected error', {
    requestId: requestIdOfRequest(request),
    method: request.method,
    path: new URL(request.url).pathname,
    error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-Error thrown',
    stack: error instanceof Error ? error.stack : undefined,
  })
}

/**
 * The answer to a failure outside Elysia's lifecycle (http/lean-route.ts), as errorHandler gives
 * it inside: an AppError by its kind, an unreachable database 503, anything else a bare 500; all
 * but AppErrors logged.
 */
export function errorResponse(
  error: unknown,
  docsUrl: string,
  logUnexpected: (request: Request, error: unknown) => void,
  request: Request,
): Response {
  if (!(error instanceof AppError)) logUnexpected(request, error)
  const known = knownError(error)
  const [status, message, fields, headers] = known
    ? [STATUS[known.kind], known.message, known.fields, known.headers]
    : [500, 'Internal Server Error', [], {}]
  return jsonAnswer(JSON.stringify(errorBody(request, status, message, docsUrl, fields)), { status, headers })
}

/**
 * For a value outside an enumeration (a union of literals), the values that would do, e.g.
 * `must be one of: public, limited, private` (TypeBox's own summary names only their types).
 */
function allowedValuesOf(issue: unknown): string | undefined {
  const schema = (issue as { schema?: { anyOf?: { const?: unknown }[] } }).schema
  const options = schema?.anyOf
  if (!options || options.length === 0 || !options.every((o) => o.const !== undefined)) return undefined
  return `must be one of: ${options.map((o) => String(o.const)).join(', ')}`
}

/** Field errors of an Elysia validation failure, without the schema it would otherwise echo. */
function fieldsOf(error: Readonly<ValidationError>): FieldError[] {
  const seen = new Set<string>()
  const fields: FieldError[] = []
  for (const issue of error.all) {
    const path = 'path' in issue && typeof issue.path === 'string' ? issue.path : ''
    const field = path.replace(/^\//, '').replace(/\//g, '.') || error.type
    const message =
      allowedValuesOf(issue) ?? ('summary' in issue && issue.summary ? String(issue.summary) : String(issue.message ?? 'invalid'))
    const key = `${field}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    fields.push({ field, message })
  }
  return fields
}

/**
 * Translates every failure into the one error body: AppError by kind, validation to 422,
 * unknown routes to 404 (405 for a method the server serves nowhere), an unreachable database to 503
 * with Retry-After (logged), anything else logged with the request id and answered as a bare 500.
 */
export const errorHandler = (
  docsUrl: string,
  logUnexpected: (request: Request, error: unknown) => void,
  checkCredential: (request: Request) => Promise<unknown> = async () => undefined,
) =>
  new Elysia({ name: 'errors' }).onError({ as: 'global' }, async ({ code, error, request, set }) => {
    const reply = (status: number, message: string, fields: FieldError[] = [], headers: Record<string, string> = {}) => {
      set.status = status
      Object.assign(set.headers, headers)
      set.headers['content-type'] = JSON_TYPE
      return errorBody(request, status, message, docsUrl, fields)
    }
    // Elysia wraps what a body parser throws; our parser throws AppError for size and depth.
    const cause = code === 'PARSE' ? error.cause : undefined
    const known = error instanceof AppError ? error : cause instanceof AppError ? cause : undefined
    if (known) return reply(STATUS[known.kind], known.message, known.fields, known.headers)
    // An answer failing its own response schema is the server's fault, not the client's.
    if (code === 'VALIDATION' && error.type !== 'response') return reply(422, 'Validation Failed', fieldsOf(error))
    if (code === 'PARSE') return reply(422, 'The request body is not valid JSON')
    if (code === 'NOT_FOUND') {
      // A credential that is present but invalid is 401 on every route, unknown ones included (docs/decisions.md §1).
      const refusal = await checkCredential(request).then(
        () => undefined,
        (e: unknown) => e,
      )
      const refused = refusal instanceof AppError ? refusal : unservedMethod(request.method)
      if (refused) return reply(STATUS[refused.kind], refused.message, refused.fields, refused.headers)
      return reply(404, 'Not Found')
    }
    if (code === 'INVALID_COOKIE_SIGNATURE') return reply(401, 'Invalid cookie')
    logUnexpected(request, error)
    const database = knownError(error)
    if (database) return reply(STATUS[database.kind], database.message, database.fields, database.headers)
    return reply(500, 'Internal Server Error')
  })
