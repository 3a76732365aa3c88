import { closeDeps, createApp, openDeps } from '../app'
import { startBackgroundWork } from '../background'
import { loadConfig, type ServeFlags } from '../config'
import { ensureFirstAdmin } from '../identity/service'
import { type Command, CommandFailed, PROGRAM, parse } from './command'

export const serve: Command = {
  summary: 'start the HTTP server (default)',
  usage: `Usage: ${PROGRAM} serve [--port N] [--host H] [--data-dir DIR] [--dev]

Starts the server. On first start it creates the site admin from PLATFORM_ADMIN_* and prints a
generated password once when PLATFORM_ADMIN_PASSWORD is not set.
  --port N        listen port (PORT, default 3000)
  --host H        listen address (HOST, default 0.0.0.0)
  --data-dir DIR  database, secret key and caches (PLATFORM_DATA_DIR, default ./data)
  --dev           run mode dev (PLATFORM_RUN_MODE=dev): enables dev-only routes`,
  async run(args) {
    const values = parse(args, {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      dev: { type: 'boolean' },
    })
    const flags: ServeFlags = { port: values.port, host: values.host, dataDir: values['data-dir'], dev: values.dev }
    const config = loadConfig(process.env, flags)
    const deps = await openDeps(config)
    const admin = await ensureFirstAdmin(deps.db, config.admin)
    if (admin.created) {
      deps.log.info('first site admin created', { username: config.admin.username })
      // The one place a password is printed: to the operator's terminal, once, not to the log.
      if (admin.generatedPassword)
        process.stderr.write(`\n  site admin "${config.admin.username}" password (shown once): ${admin.generatedPassword}\n\n`)
    }
    const app = createApp(deps)
    try {
      app.listen({
        port: config.port,
        hostname: config.host,
        reusePort: false,
        maxRequestBodySize: config.maxBodyBytes,
        ...(config.tls ? { tls: { cert: Bun.file(config.tls.certFile), key: Bun.file(config.tls.keyFile) } } : {}),
        // Streams (watch, logs -f, exec) opt out per request; plain requests idle out after a minute.
        idleTimeout: 60,
      })
    } catch (error) {
      await closeDeps(deps)
      const code = (error as { code?: string }).code
      if (code === 'EADDRINUSE')
        throw new CommandFailed(`port ${config.port} on ${config.host} is already in use (another server running?)`)
      throw new CommandFailed(
        `cannot listen on ${config.host}:${config.port}: ${code ?? (error instanceof Error ? error.message : String(error))}`,
      )
    }
    // Only once the port is ours: a server that cannot listen must not re-point the running one's sandbox.
    const stopBackground = await startBackgroundWork(deps)
    // Handlers first, then the "listening" line: whoever waits for that line may signal at once.
    const stopped = new Promise<number>((resolveExit) => {
      let stopping = false
      const stop = async (signal: string) => {
        if (stopping) process.exit(1)
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
    })
    deps.log.info('listening', {
      url: `${config.tls ? 'https' : 'http'}://${config.host}:${app.server?.port}`,
      publicUrl: config.publicUrl,
      database: deps.db.driver,
    })
    return stopped
  },
}
