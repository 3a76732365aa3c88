import { Elysia } from 'elysia'
import type { Logger } from '../logger'

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY = new Set([
  'token',
  'access_token',
  'password',
  'sudo',
  'code',
  'client_secret',
  'refresh_token',
  'code_verifier',
  'state',
])
const started = new WeakMap<Request, { at: number; id: string }>()

/** The path with secret query values replaced by `[redacted]`. */
function loggablePath(url: URL): string {
  if (!url.search) return url.pathname
  const params = new URLSearchParams(url.search)
  for (const key of [...params.keys()]) if (SECRET_QUERY.has(key.toLowerCase())) params.set(key, '[redacted]')
  return `${url.pathname}?${params.toString()}`
}

/** A client-sent request id is kept when it is short and plain; otherwise one is made. */
function requestIdOf(request: Request): string {
  const sent = request.headers.get('x-request-id')
  return sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : crypto.randomUUID()
}

export const requestIdOfRequest = (request: Request): string | undefined => started.get(request)?.id

/** When the request began (performance.now()), once beginRequest saw it. */
export const requestStartedAt = (request: Request): number | undefined => started.get(request)?.at

/** Notes when the request began and gives it its id (the client's or a new one), echoed as `X-Request-Id`. */
export function beginRequest(request: Request): string {
  const id = requestIdOf(request)
  started.set(request, { at: performance.now(), id })
  return id
}

/** The request's log line: method, path (secrets redacted), status, duration, id. */
export function logRequest(log: Logger, request: Request, status: number): void {
  const start = started.get(request)
  log.info('request', {
    method: request.method,
    path: loggablePath(new URL(request.url)),
    status,
    durationMs: start ? Math.round((performance.now() - start.at) * 100) / 100 : undefined,
    requestId: start?.id,
  })
}

/** Echoes `X-Request-Id` and, when enabled, writes one JSON line per request: method, path, status, duration, id. */
export const requestLog = (log: Logger, enabled: boolean) => {
  const plugin = new Elysia({ name: 'request-log' }).onRequest(({ request, set }) => {
    set.headers['x-request-id'] = beginRequest(request)
  })
  // Not even registered when off: an after-response hook costs a deferred callback per request.
  if (!enabled) return plugin
  return plugin.onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
    logRequest(log, request, responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200))
  })
}
