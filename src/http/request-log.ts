import { Elysia } from 'elysia'
import type { Logger } from '../logger'

/**
 * Query parameters whose values never reach a log line: any name holding one of these words
 * (`passwd`, `private_token`, `X-Amz-Signature`, `api_key`, `sessionid`, `csrf`, `authorization`, ...),
 * since a client or a member cluster may name a secret however it likes; and the OAuth2 and sudo
 * names that hold one under a plain word. Over-redacting a harmless value costs a log reader little;
 * missing a secret leaks it to everyone who reads logs.
 */
const SECRET_WORDS = [
  'token',
  'pass',
  'secret',
  'key',
  'session',
  'csrf',
  'xsrf',
  'auth',
  'signature',
  'credential',
  'cookie',
  'jwt',
  'otp',
]
const SECRET_NAMES = new Set(['code', 'code_verifier', 'state', 'sudo', 'sig', 'nonce'])

/** Whether the value of query parameter `name` is a secret (case ignored). */
export function isSecretQueryName(name: string): boolean {
  const lower = name.toLowerCase()
  return SECRET_NAMES.has(lower) || SECRET_WORDS.some((word) => lower.includes(word))
}

const started = new WeakMap<Request, { at: number; id: string }>()

/** A `name=value` pair inside a path segment (`/user;token=…`, `/x/a=1,b=2`), `=` also percent-encoded. */
const PATH_PAIR = /([^/;,&=]+?)(=|%3d)([^/;,&]*)/gi

const decodedName = (name: string) => {
  try {
    return decodeURIComponent(name)
  } catch {
    return name
  }
}

/** The path with the values of secret query parameters, and of secret `name=value` pairs in its segments, replaced by `[redacted]`. */
function loggablePath(url: URL): string {
  const pathname = url.pathname.replace(PATH_PAIR, (pair, name: string, equals: string) =>
    isSecretQueryName(decodedName(name)) ? `${name}${equals}[redacted]` : pair,
  )
  if (!url.search) return pathname
  const params = new URLSearchParams(url.search)
  for (const key of [...params.keys()]) if (isSecretQueryName(key)) params.set(key, '[redacted]')
  return `${pathname}?${params.toString()}`
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
