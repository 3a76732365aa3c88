import { timingSafeEqual } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { Elysia, t } from 'elysia'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { type Deps, runtimeSlot } from '../deps'
import { AppError } from '../errors'
import { localDatabaseFile } from '../storage/database'
import { errorResponse, logUnexpected } from './errors'
import { guard } from './guard'
import { DOCS_PATH } from './openapi'
import { pathOf } from './routable-url'
import { ErrorBody } from './schemas'

/**
 * The Prometheus metrics of one app (docs/decisions.md §9, docs/operations.md "Metrics"), made
 * only when PLATFORM_METRICS_TOKEN is set: without it nobody may read them, so nothing is counted.
 * Labels carry route templates, methods, statuses, clusters as `owner/name` and fixed outcome
 * words; never a raw path, a user-given value that is not a registered name, or a credential.
 */
export interface Metrics {
  registry: Registry
  /** The exposition a scrape gets: this process's, or a worker's group's. */
  scrape(): Promise<string>
  /** Counts one HTTP answer (the app's routes and the lean route alike). */
  request(method: string, route: string, status: number, seconds: number): void
  /** How long a member cluster took to answer (its headers, for a stream). */
  proxyUpstream: Histogram<'cluster'>
  pdfRenders: Counter<'outcome'>
  pdfQueueDepth: Gauge
  usageEvents: Counter<'result'>
  msgbusConnected: Gauge
}

const METRICS_PATH = '/metrics'
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** Default families that say something on Bun: the process's, the event loop's delay, the JavaScript heap. */
const KEPT_DEFAULTS = ['process_', 'nodejs_eventloop_lag_', 'nodejs_heap_size_', 'nodejs_external_memory_']

/** The database's gauges, read at scrape time (nothing is counted per query). */
function databaseGauges(deps: Deps, registry: Registry): void {
  new Gauge({
    name: 'platform_db_up',
    help: '1 when the database answered a trivial query during this scrape, else 0',
    registers: [registry],
    // Across workers: up only when every worker's database answered.
    aggregator: 'min',
    async collect() {
      this.set(
        await deps.db.ping().then(
          () => 1,
          () => 0,
        ),
      )
    },
  })
  const file = localDatabaseFile(deps.config.databaseUrl)
  if (file === undefined || file === ':memory:') return
  new Gauge({
    name: 'platform_db_size_bytes',
    help: 'Bytes of the local database file and its write-ahead log (not kept for a remote libSQL server)',
    registers: [registry],
    // Every worker measures the same file.
    aggregator: 'max',
    collect() {
      this.set([file, `${file}-wal`].reduce((sum, path) => sum + (existsSync(path) ? statSync(path).size : 0), 0))
    },
  })
}

function createMetrics(deps: Deps): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const metric of registry.getMetricsAsArray())
    if (!KEPT_DEFAULTS.some((prefix) => metric.name.startsWith(prefix))) registry.removeSingleMetric(metric.name)
  databaseGauges(deps, registry)
  const requests = new Counter({
    name: 'platform_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const durations = new Histogram({
    name: 'platform_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (to the response head for streams), by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  // A labelled child per series, found by one string key: the lean proxy route counts each request too.
  const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<'method' | 'route' | 'status'> }>()
  const toSupervisor = deps.config.workerId === undefined ? undefined : process.send?.bind(process)
  return {
    registry,
    scrape: toSupervisor ? groupScrape(registry, deps.log, (message) => toSupervisor(message)) : () => registry.metrics(),
    request(method, route, status, seconds) {
      const key = `${method}\u0000${route}\u0000${status}`
      let child = series.get(key)
      if (!child) {
        const labels = { method: METHODS.has(method) ? method : 'OTHER', route, status: String(status) }
        child = { count: requests.labels(labels), time: durations.labels(labels) }
        series.set(key, child)
      }
      child.count.inc()
      child.time.observe(seconds)
    },
    proxyUpstream: new Histogram({
      name: 'platform_proxy_upstream_duration_seconds',
      help: 'Time a member cluster took to answer a proxied request (to its response head for streams), by cluster owner/name',
      labelNames: ['cluster'] as const,
      registers: [registry],
    }),
    pdfRenders: new Counter({
      name: 'platform_pdf_renders_total',
      help: 'Usage report PDF renders, by outcome (ok, failed, refused when the queue is full)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    pdfQueueDepth: new Gauge({ name: 'platform_pdf_queue_depth', help: 'PDF renders waiting for a free renderer', registers: [registry] }),
    usageEvents: new Counter({
      name: 'platform_usage_events_total',
      help: 'Usage events ingested, by result (accepted, duplicate, rejected)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    msgbusConnected: new Gauge({
      name: 'platform_msgbus_connected',
      help: '1 while the message-bus system connection is up, 0 while it is down or MSGBUS_URLS is unset',
      registers: [registry],
      aggregator: 'min',
    }),
  }
}

/**
 * The messages over the IPC channel of `serve --workers` that make one scrape describe every
 * worker (docs/operations.md, "Metrics"): the worker a scrape reached asks its supervisor
 * (`metricsAsk`), which asks every worker for its values (`metricsCollect`), sums what they send
 * (`metricsOf`, prom-client's aggregation as for node's cluster module) and answers the asker
 * (`metricsAnswer`).
 */
export type MetricsMessage =
  | { metricsAsk: number }
  | { metricsCollect: number }
  | { metricsOf: number; values: unknown[] }
  | { metricsAnswer: number; text: string }

/** How long a worker waits for its group's scrape before it answers with its own values alone. */
const GROUP_SCRAPE_MS = 5000

/**
 * The exposition of a worker of `serve --workers`: the whole group's, through the supervisor; the
 * worker answers the supervisor's collections from its own registry meanwhile.
 */
function groupScrape(registry: Registry, log: Deps['log'], send: (message: MetricsMessage) => void): () => Promise<string> {
  const waiting = new Map<number, (text: string | undefined) => void>()
  let asked = 0
  process.on('message', (message: unknown) => {
    if (typeof message !== 'object' || message === null) return
    const m = message as Partial<Record<'metricsCollect' | 'metricsAnswer', number>> & { text?: string }
    if (m.metricsCollect !== undefined) {
      const id = m.metricsCollect
      void registry.getMetricsAsJSON().then((values) => send({ metricsOf: id, values }))
    } else if (m.metricsAnswer !== undefined) {
      waiting.get(m.metricsAnswer)?.(m.text)
      waiting.delete(m.metricsAnswer)
    }
  })
  return async () => {
    const id = ++asked
    const text = await new Promise<string | undefined>((resolve) => {
      waiting.set(id, resolve)
      setTimeout(() => waiting.delete(id) && resolve(undefined), GROUP_SCRAPE_MS)
      send({ metricsAsk: id })
    })
    if (text !== undefined) return text
    log.error('the other workers did not send their metrics in time: this scrape describes one worker')
    return registry.metrics()
  }
}

const METRICS = runtimeSlot('metrics', (deps) => (deps.config.metricsToken === undefined ? undefined : createMetrics(deps)))

/** This app's metrics, or undefined when PLATFORM_METRICS_TOKEN is unset (nothing is counted then). */
export const metricsOf = (deps: Deps): Metrics | undefined => deps.runtimes.of(METRICS)

const sameSecret = (presented: string, expected: string) => {
  const a = new Bun.CryptoHasher('sha256').update(presented).digest()
  const b = new Bun.CryptoHasher('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/** The exposition for a caller presenting `Authorization: Bearer <PLATFORM_METRICS_TOKEN>`. Throws notFound (unset), unauthenticated. */
async function exposition(deps: Deps, request: Request): Promise<Response> {
  const metrics = metricsOf(deps)
  const token = deps.config.metricsToken
  if (!metrics || token === undefined) throw new AppError('notFound', 'Not Found')
  const [scheme, presented] = (request.headers.get('authorization') ?? '').split(' ', 2)
  if (scheme?.toLowerCase() !== 'bearer' || !presented || !sameSecret(presented, token))
    throw new AppError('unauthenticated', 'GET /metrics needs Authorization: Bearer with PLATFORM_METRICS_TOKEN')
  return new Response(await metrics.scrape(), { headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' } })
}

/**
 * GET /metrics, answered before Elysia's lifecycle: the platform's own authentication would take
 * the Bearer token for an access token. The documented route of the same path answers the same.
 */
export const metricsRoute = (deps: Deps) => {
  const docsUrl = `${deps.config.publicUrl}${DOCS_PATH}`
  const answer = (request: Request) =>
    exposition(deps, request).catch((error: unknown) => errorResponse(error, docsUrl, (r, e) => logUnexpected(deps.log, r, e), request))
  return new Elysia({ name: 'metrics' })
    .use(guard(deps))
    .wrap((handle, request: Request) => (request.method === 'GET' && pathOf(request.url) === METRICS_PATH ? () => answer(request) : handle))
    .get(METRICS_PATH, ({ request }) => answer(request), {
      public: true,
      response: { 200: t.String({ description: 'Prometheus text exposition format 0.0.4' }), 401: ErrorBody, 404: ErrorBody },
      detail: {
        summary: 'Prometheus metrics, for Authorization: Bearer with PLATFORM_METRICS_TOKEN (404 when it is unset, 401 for a wrong token)',
        tags: ['miscellaneous'],
      },
    })
}

/** Runs one member call for `cluster` (`owner/name`), its time (to the answer's head) recorded when metrics are on. */
export async function timedUpstream<T>(deps: Deps, cluster: string, call: () => Promise<T>): Promise<T> {
  const metrics = metricsOf(deps)
  if (!metrics) return call()
  const started = performance.now()
  try {
    return await call()
  } finally {
    metrics.proxyUpstream.labels(cluster).observe((performance.now() - started) / 1000)
  }
}

/** Counts every answer of the app's routes by route template, when metrics are on. */
export const requestMetrics = (deps: Deps, startedAt: (request: Request) => number | undefined) => {
  const metrics = metricsOf(deps)
  const plugin = new Elysia({ name: 'request-metrics' })
  // Not even registered when off: an after-response hook costs a deferred callback per request.
  if (!metrics) return plugin
  return plugin.onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
    const started = startedAt(request)
    const status = responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200)
    metrics.request(request.method, route || 'unmatched', status, started === undefined ? 0 : (performance.now() - started) / 1000)
  })
}
