import { closeDeps, createApp, openDeps } from '../app'
import { startBackgroundWork } from '../background'
import { type Config, loadConfig, type ServeFlags } from '../config'
import { type Command, PROGRAM, parse, refusingUnusableDatabase } from './command'
import { ensureGeneratedTls, generatedCa } from './server-tls'
import { listenFailed, prepareDatabase } from './start-up'
import { superviseWorkers } from './workers'

export const serve: Command = {
  summary: 'start the HTTP server (default)',
  usage: `Usage: ${PROGRAM} serve [--port N] [--host H] [--data-dir DIR] [--dev] [--workers N]

Starts the server. On first start it creates the site admin from PLATFORM_ADMIN_* and prints a
generated password once when PLATFORM_ADMIN_PASSWORD is not set.
  --port N        listen port (PORT, default 3000)
  --host H        listen address (HOST, default 0.0.0.0)
  --data-dir DIR  database, secret key and caches (PLATFORM_DATA_DIR, default ./data)
  --dev           run mode dev (PLATFORM_RUN_MODE=dev): enables dev-only routes
  --workers N     processes serving the port (PLATFORM_WORKERS, default 1; auto: one per core).
                  A dead worker is replaced; SIGTERM drains and stops them all.`,
  async run(args) {
    const values = parse(args, {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      dev: { type: 'boolean' },
      workers: { type: 'string' },
    })
    const flags: ServeFlags = {
      port: values.port,
      host: values.host,
      dataDir: values['data-dir'],
      dev: values.dev,
      workers: values.workers,
    }
    const config = loadConfig(process.env, flags)
    await ensureGeneratedTls(config)
    if (config.workers > 1 && config.workerId === undefined) return superviseWorkers(config, args)
    return serveHere(config)
  },
}

/** What a client must trust when the server made its own CA: its path and fingerprint, printed at start. */
function tlsFacts(config: Config): Record<string, string> {
  const ca = generatedCa(config)
  return ca ? { caFile: ca.caFile, caFingerprint: `SHA256 ${ca.fingerprint}` } : {}
}

/**
 * Serves in this process until SIGTERM or SIGINT. A worker of `serve --workers` (config.workerId)
 * shares the port with its siblings, tells its supervisor once it listens, and stops when the
 * supervisor is gone.
 */
async function serveHere(config: Config): Promise<number> {
  const deps = await refusingUnusableDatabase(config, () => openDeps(config))
  const app = createApp(deps)
  try {
    app.listen({
      port: config.port,
      hostname: config.host,
      reusePort: config.workerId !== undefined,
      maxRequestBodySize: config.maxBodyBytes,
      ...(config.tls ? { tls: { cert: Bun.file(config.tls.certFile), key: Bun.file(config.tls.keyFile) } } : {}),
      // Streams (watch, logs -f, exec) opt out per request; plain requests idle out after a minute.
      idleTimeout: 60,
      // Bun's development mode (Elysia turns it on unless NODE_ENV=production) renders uncaught errors as a page
      // and costs every request a little; only `serve --dev` wants it.
      development: config.runMode === 'dev',
    })
  } catch (error) {
    await closeDeps(deps)
    throw listenFailed(config, error)
  }
  // Once the port is ours: a start that cannot listen creates no admin, whose one-time password would be lost.
  if (config.workerId === undefined) await refusingUnusableDatabase(config, () => prepareDatabase(deps))
  // Only once the port is ours: a server that cannot listen must not re-point the running one's sandbox.
  const stopBackground = await startBackgroundWork(deps)
  // Handlers first, then the "listening" line: whoever waits for that line may signal at once.
  const stopped = new Promise<number>((resolveExit) => {
    let stopping = false
    const stop = async (signal: string) => {
      if (stopping) {
        // A second signal to a lone server means "now". A worker may get the same SIGTERM twice (from
        // its supervisor and from a service manager signalling the whole group): it keeps draining,
        // and its supervisor kills it if asked twice.
        if (config.workerId === undefined) process.exit(1)
        return
      }
      stopping = true
      deps.log.info('shutting down', { signal })
      const grace = setTimeout(() => {
        void app.server?.stop(true)
      }, config.shutdownGraceSeconds * 1000)
      await app.server?.stop(false)
      clearTimeout(grace)
      await stopBackground()
      await closeDeps(deps)
      deps.log.info('stopped')
      resolveExit(0)
    }
    process.on('SIGTERM', () => void stop('SIGTERM'))
    process.on('SIGINT', () => void stop('SIGINT'))
    // A worker whose supervisor died (kill -9) must not serve on unsupervised.
    if (config.workerId !== undefined) process.on('disconnect', () => void stop('supervisor gone'))
  })
  deps.log.info('listening', {
    url: `${config.tls ? 'https' : 'http'}://${config.host}:${app.server?.port}`,
    publicUrl: config.publicUrl,
    database: deps.db.driver,
    ...tlsFacts(config),
    ...(config.workerId !== undefined ? { worker: config.workerId } : {}),
  })
  process.send?.({ listening: config.workerId })
  return stopped
}
