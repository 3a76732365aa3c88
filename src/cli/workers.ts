import type { Subprocess } from 'bun'
import { AggregatorRegistry } from 'prom-client'
import { type Config, ConfigError } from '../config'
import type { MetricsMessage } from '../http/metrics'
import { jsonLogger } from '../logger'
import { withDeps } from './command'
import { listenFailed, prepareDatabase } from './start-up'

/** A worker that dies is started again after this long, doubled (up to the maximum) while it keeps dying young. */
const RESTART_DELAY_MS = 1000
const MAX_RESTART_DELAY_MS = 30_000
/** A worker that ran this long before dying was healthy: its replacement starts after RESTART_DELAY_MS again. */
const HEALTHY_AFTER_MS = 10_000

/** This program again, as the built binary or the source entry point, with `args`. */
const selfCommand = (args: string[]) => (Bun.isStandaloneExecutable ? [process.execPath, ...args] : [process.execPath, Bun.main, ...args])

/**
 * `serve --workers N`: this process serves nothing itself. It applies migrations and creates the
 * first admin once (workers would race to) once the port is known to be free, then runs N `serve`
 * processes that share the port (SO_REUSEPORT: the kernel spreads connections over them). A
 * worker that dies is replaced; SIGTERM or SIGINT is passed on to every worker (each drains its
 * requests) and the supervisor exits once all have; a second signal kills them. Singletons run in
 * the workers, one process each (src/singletons).
 */
export async function superviseWorkers(config: Config, args: string[]): Promise<number> {
  if (config.port === 0) throw new ConfigError('--workers (PLATFORM_WORKERS) above 1 needs a fixed --port (PORT): the workers share it')
  const log = jsonLogger()
  // The port first: a start that cannot listen creates no admin, whose one-time password would be lost.
  assertPortFree(config)
  await withDeps(config, prepareDatabase)
  const workers = new Map<number, { child: Subprocess; startedAt: number; restartDelayMs: number }>()
  const listening = new Set<number>()
  let stopping = false

  const start = (id: number, restartDelayMs = RESTART_DELAY_MS) => {
    const child = Bun.spawn(selfCommand(['serve', ...args]), {
      env: { ...process.env, PLATFORM_WORKER_ID: String(id) },
      stdio: ['ignore', 'inherit', 'inherit'],
      // Its own process group: a terminal's Ctrl-C reaches the supervisor, which stops the workers once.
      detached: true,
      serialization: 'json',
      ipc: (message: { listening?: number } | MetricsMessage) => {
        if ('metricsAsk' in message || 'metricsOf' in message) return scrapes.receive(id, message)
        if (!('listening' in message) || message.listening === undefined || listening.has(id)) return
        listening.add(id)
        if (listening.size === config.workers)
          log.info('listening', { url: `${config.tls ? 'https' : 'http'}://${config.host}:${config.port}`, workers: config.workers })
      },
    })
    const worker = { child, startedAt: performance.now(), restartDelayMs }
    workers.set(id, worker)
    void child.exited.then((code) => {
      if (stopping) return
      const healthy = performance.now() - worker.startedAt >= HEALTHY_AFTER_MS
      const delayMs = healthy ? RESTART_DELAY_MS : worker.restartDelayMs
      log.error('worker exited, starting another', { worker: id, code, signal: child.signalCode, inMs: delayMs })
      setTimeout(() => {
        if (!stopping) start(id, Math.min(delayMs * 2, MAX_RESTART_DELAY_MS))
      }, delayMs)
    })
  }
  const scrapes = groupScrapes(() => [...workers.entries()].filter(([id]) => listening.has(id)).map(([id, { child }]) => ({ id, child })))
  for (let id = 1; id <= config.workers; id++) start(id)

  return new Promise<number>((resolveExit) => {
    const stop = async (signal: string) => {
      if (stopping) {
        for (const { child } of workers.values()) child.kill('SIGKILL')
        process.exit(1)
      }
      stopping = true
      log.info('shutting down', { signal, workers: workers.size })
      for (const { child } of workers.values()) child.kill('SIGTERM')
      const codes = await Promise.all([...workers.values()].map(({ child }) => child.exited))
      log.info('stopped')
      resolveExit(codes.every((code) => code === 0) ? 0 : 1)
    }
    process.on('SIGTERM', () => void stop('SIGTERM'))
    process.on('SIGINT', () => void stop('SIGINT'))
  })
}

/** How long a group scrape waits for the workers' values; a worker that sent none by then is left out. */
const COLLECT_MS = 3000

/**
 * One scrape for the whole group (docs/operations.md, "Metrics"): a worker's `metricsAsk` makes
 * every listening worker send its values, which are summed (prom-client's cluster aggregation:
 * counters and histograms add up, each gauge by its own rule) and sent back to the asker.
 */
function groupScrapes(listeningWorkers: () => { id: number; child: Subprocess }[]) {
  const gathering = new Map<number, { values: unknown[][]; expected: number; done: () => void }>()
  let gathered = 0
  const gather = async (asker: Subprocess, askId: number) => {
    const id = ++gathered
    const targets = listeningWorkers()
    const values: unknown[][] = []
    await new Promise<void>((resolve) => {
      gathering.set(id, { values, expected: targets.length, done: resolve })
      setTimeout(resolve, COLLECT_MS)
      for (const { child } of targets) child.send({ metricsCollect: id } satisfies MetricsMessage)
    })
    gathering.delete(id)
    const text = await AggregatorRegistry.aggregate(values).metrics()
    asker.send({ metricsAnswer: askId, text } satisfies MetricsMessage)
  }
  return {
    receive(from: number, message: MetricsMessage) {
      if ('metricsAsk' in message) {
        const asker = listeningWorkers().find((w) => w.id === from)?.child
        if (asker) void gather(asker, message.metricsAsk)
      } else if ('metricsOf' in message) {
        const pending = gathering.get(message.metricsOf)
        if (!pending) return
        pending.values.push(message.values)
        if (pending.values.length === pending.expected) pending.done()
      }
    },
  }
}

/** Fails as `serve` would when the port is taken: workers sharing a port would not notice another server holding it. */
function assertPortFree(config: Config): void {
  try {
    Bun.serve({ port: config.port, hostname: config.host, fetch: () => new Response(null, { status: 503 }) }).stop(true)
  } catch (error) {
    throw listenFailed(config, error)
  }
}
