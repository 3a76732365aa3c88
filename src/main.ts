#!/usr/bin/env bun
import { existsSync, readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Presets, SingleBar } from 'cli-progress'
import { closeDeps, createApp, openDeps } from './app'
import type { Actor } from './authz/actor'
import { TOKEN_SCOPES } from './authz/actor'
import { statusProbes } from './clusters/probe'
import { startSandbox } from './clusters/sandbox'
import * as clusters from './clusters/service'
import { type Config, ConfigError, loadConfig, type ServeFlags } from './config'
import type { Deps } from './deps'
import { AppError } from './errors'
import { createUser, ensureFirstAdmin } from './identity/service'
import { findFirstSiteAdmin, findUserByName } from './identity/store'
import { mintToken } from './identity/tokens/service'
import { natsConfig } from './msgbus/accounts'
import { startMsgbus } from './msgbus/bus'
import { findOrgByName } from './orgs/store'
import { openDatabase } from './storage/database'
import { importNdjsonFile } from './usage/import'

const HELP: Record<string, string> = {
  main: `platform-api: a self-hosted multi-cluster platform API

Usage: bun src/main.ts <command> [options]

Commands:
  serve                 start the HTTP server (default)
  migrate               apply database migrations and exit
  admin create-user     create a user
  admin create-token    create an access token for a user (printed once)
  cluster import        register a cluster from a kubeconfig (the platform connects to it first)
  cluster list          list registered clusters
  cluster remove        forget a cluster and its stored credentials
  msgbus nats-config    print the nats-server configuration of the message bus
  usage import          ingest usage events from an NDJSON file for an organization

Run "<command> --help" for a command's options. Configuration comes from the environment
(PORT, HOST, PLATFORM_DATA_DIR, DATABASE_URL, PLATFORM_SECRET_KEY, PLATFORM_PUBLIC_URL,
PLATFORM_ADMIN_USERNAME/PASSWORD/EMAIL, PLATFORM_MODES, PLATFORM_RUN_MODE, ...); see docs/operations.md.`,
  serve: `Usage: bun src/main.ts serve [--port N] [--host H] [--data-dir DIR] [--dev]

Starts the server. On first start it creates the site admin from PLATFORM_ADMIN_* and prints a
generated password once when PLATFORM_ADMIN_PASSWORD is not set.
  --port N        listen port (PORT, default 3000)
  --host H        listen address (HOST, default 0.0.0.0)
  --data-dir DIR  database, secret key and caches (PLATFORM_DATA_DIR, default ./data)
  --dev           run mode dev (PLATFORM_RUN_MODE=dev): enables dev-only routes`,
  migrate: `Usage: bun src/main.ts migrate

Applies pending database migrations to DATABASE_URL (or the data dir's database) and exits.`,
  'create-user': `Usage: bun src/main.ts admin create-user --username NAME --email EMAIL [--password PW] [--admin] [--must-change-password]

Creates a user. Without --password a random one is generated and printed once.`,
  'create-token': `Usage: bun src/main.ts admin create-token --username NAME [--name TOKEN_NAME] [--scopes all,read:user,...]

Creates an access token for the user and prints it once; it cannot be shown again.
Scopes: ${TOKEN_SCOPES.join(', ')} (default all).`,
  'cluster import': `Usage: bun src/main.ts cluster import --owner OWNER --name NAME --kubeconfig FILE [--context CONTEXT] [--display-name TEXT]

Registers the kubeconfig's cluster (its current context, or CONTEXT) for the user or organization
OWNER. The platform connects first and refuses, naming the reason, when it cannot. Loopback or
private API servers need PLATFORM_ALLOW_PRIVATE_ENDPOINTS=true.`,
  'cluster list': `Usage: bun src/main.ts cluster list [--owner OWNER]

Lists registered clusters (all owners, or OWNER's) with their live status.`,
  'usage import': `Usage: bun src/main.ts usage import --org ORG FILE.ndjson

Ingests usage events (docs/decisions.md §5a), one JSON event per line, for organization ORG, with a progress
bar. Like POST /api/v1/usage/events: a bad line or event is rejected alone (reported with its index
among non-empty lines), events already stored are duplicates. Exit 1 when any line was rejected.`,
  'cluster remove': `Usage: bun src/main.ts cluster remove --owner OWNER --name NAME

Forgets the cluster and its stored credentials; nothing is done to the cluster itself.`,
  'nats-config': `Usage: bun src/main.ts msgbus nats-config --resolver-dir DIR [--port 4222] [--host 0.0.0.0] [--websocket-port N]

Prints a complete nats-server configuration: the platform's operator, system account and account
JWTs (made on first need, seeds sealed in the database), a full resolver keeping pushed account
updates in DIR, and with --websocket-port a websocket listener that reads the msgbus_jwt sign-in
cookie. Run nats-server -c with it, then start the platform with MSGBUS_URLS=nats://HOST:PORT.`,
}

/** Exit codes: 0 ok, 1 the command failed, 2 bad usage or configuration. */
class UsageError extends Error {}
/** A command that could not do its work for a reason the operator can act on (exit 1, message only). */
class CommandFailed extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') return print(HELP.main)
  if (command === 'serve') return serve(rest)
  if (command === 'migrate') return migrate(rest)
  if (command === 'admin') {
    const [sub, ...args] = rest
    if (sub === 'create-user') return adminCreateUser(args)
    if (sub === 'create-token') return adminCreateToken(args)
    throw new UsageError(`unknown admin command "${sub ?? ''}"; try create-user or create-token`)
  }
  if (command === 'cluster') {
    const [sub, ...args] = rest
    if (sub === 'import') return clusterImport(args)
    if (sub === 'list') return clusterList(args)
    if (sub === 'remove') return clusterRemove(args)
    throw new UsageError(`unknown cluster command "${sub ?? ''}"; try import, list or remove`)
  }
  if (command === 'msgbus') {
    const [sub, ...args] = rest
    if (sub === 'nats-config') return msgbusNatsConfig(args)
    throw new UsageError(`unknown msgbus command "${sub ?? ''}"; try nats-config`)
  }
  if (command === 'usage') {
    const [sub, ...args] = rest
    if (sub === 'import') return usageImport(args)
    throw new UsageError(`unknown usage command "${sub ?? ''}"; try import`)
  }
  throw new UsageError(`unknown command "${command}"; run --help`)
}

function print(text: string): number {
  console.log(text)
  return 0
}

function parse<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  return parseCommandArgs(
    () => parseArgs({ args, options: { ...options, help: { type: 'boolean' } }, strict: true, allowPositionals: false }).values,
  )
}

/** Runs a parseArgs call; what it refuses is a usage error (exit 2). */
function parseCommandArgs<T>(parseThem: () => T): T {
  try {
    return parseThem()
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
}

async function withDeps<T>(config: Config, work: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = await openDeps(config)
  try {
    return await work(deps)
  } finally {
    await closeDeps(deps)
  }
}

async function usageImport(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(() =>
    parseArgs({ args, options: { org: { type: 'string' }, help: { type: 'boolean' } }, strict: true, allowPositionals: true }),
  )
  if (parsed.values.help) return print(HELP['usage import'])
  const [file, ...extra] = parsed.positionals
  if (!parsed.values.org || !file || extra.length > 0) throw new UsageError('usage: usage import --org ORG FILE.ndjson')
  if (!existsSync(file)) throw new CommandFailed(`${file}: no such file`)
  const result = await withDeps(loadConfig(), async (deps) => {
    const org = await findOrgByName(deps.db.read, parsed.values.org!)
    if (!org) throw new CommandFailed(`organization "${parsed.values.org}" does not exist`)
    const bar = new SingleBar(
      {
        format: 'importing {bar} {percentage}% | {accepted} accepted, {duplicates} duplicates, {rejected} rejected',
        hideCursor: true,
        noTTYOutput: false,
        stream: process.stderr,
      },
      Presets.shades_classic,
    )
    bar.start(Math.max(1, statSync(file).size), 0, { accepted: 0, duplicates: 0, rejected: 0 })
    try {
      return await importNdjsonFile(deps, org.id, file, (p) =>
        bar.update(p.bytesRead, { accepted: p.result.accepted, duplicates: p.result.duplicates, rejected: p.result.rejected.length }),
      )
    } finally {
      bar.stop()
    }
  })
  console.log(`${result.accepted} accepted, ${result.duplicates} duplicates, ${result.rejected.length} rejected`)
  for (const r of result.rejected.slice(0, 20)) console.log(`  line ${r.index}: ${r.message}`)
  if (result.rejected.length > 20) console.log(`  … and ${result.rejected.length - 20} more`)
  return result.rejected.length > 0 ? 1 : 0
}

async function migrate(args: string[]): Promise<number> {
  const values = parse(args, {})
  if (values.help) return print(HELP.migrate)
  const config = loadConfig()
  const db = await openDatabase(config.databaseUrl, { authToken: config.databaseAuthToken })
  await db.close()
  console.log(`migrations applied to ${config.databaseUrl.replace(/\?.*$/, '')}`)
  return 0
}

async function adminCreateUser(args: string[]): Promise<number> {
  const values = parse(args, {
    username: { type: 'string' },
    email: { type: 'string' },
    password: { type: 'string' },
    admin: { type: 'boolean' },
    'must-change-password': { type: 'boolean' },
  })
  if (values.help) return print(HELP['create-user'])
  if (!values.username || !values.email) throw new UsageError('--username and --email are required')
  const generated = values.password ? undefined : Buffer.from(crypto.getRandomValues(new Uint8Array(15))).toString('base64url')
  const user = await withDeps(loadConfig(), (deps) =>
    createUser(deps.db, {
      username: values.username!,
      email: values.email!,
      password: values.password ?? generated!,
      isAdmin: values.admin ?? false,
      mustChangePassword: values['must-change-password'] ?? false,
    }),
  )
  console.log(`created user ${user.name} (id ${user.id})${user.isAdmin ? ' as site admin' : ''}`)
  if (generated) console.log(`generated password (shown once): ${generated}`)
  return 0
}

async function adminCreateToken(args: string[]): Promise<number> {
  const values = parse(args, { username: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } })
  if (values.help) return print(HELP['create-token'])
  if (!values.username) throw new UsageError('--username is required')
  const scopes = (values.scopes ?? 'all')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = scopes.filter((s) => !(TOKEN_SCOPES as readonly string[]).includes(s))
  if (unknown.length > 0) throw new UsageError(`unknown scope(s) ${unknown.join(', ')}; known: ${TOKEN_SCOPES.join(', ')}`)
  const plaintext = await withDeps(loadConfig(), async (deps) => {
    const user = await findUserByName(deps.db.read, values.username!)
    if (!user) throw new AppError('notFound', `user "${values.username}" does not exist`)
    const name = values.name ?? `cli-${new Date().toISOString().replace(/[:.]/g, '-')}`
    return (await mintToken(deps.db, user.id, { name, scopes })).plaintext
  })
  console.log(plaintext)
  return 0
}

/** The command line acts as the site admin: whoever runs it can read the database anyway. */
async function operator(deps: Deps): Promise<Actor> {
  const admin = await findFirstSiteAdmin(deps.db.read)
  if (!admin) throw new CommandFailed('no site admin yet: start the server once (it creates one) or run admin create-user --admin')
  return { user: admin, credential: 'basic-password', scopes: undefined }
}

async function clusterImport(args: string[]): Promise<number> {
  const values = parse(args, {
    owner: { type: 'string' },
    name: { type: 'string' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    'display-name': { type: 'string' },
  })
  if (values.help) return print(HELP['cluster import'])
  if (!values.owner || !values.name || !values.kubeconfig) throw new UsageError('--owner, --name and --kubeconfig are required')
  let kubeconfig: string
  try {
    kubeconfig = readFileSync(values.kubeconfig, 'utf8')
  } catch (error) {
    throw new CommandFailed(`cannot read ${values.kubeconfig}: ${(error as { code?: string }).code ?? String(error)}`)
  }
  const info = await withDeps(loadConfig(), async (deps) =>
    clusters.importCluster(deps, statusProbes(deps.clock), await operator(deps), values.owner!, {
      name: values.name!,
      kubeconfig,
      context: values.context,
      displayName: values['display-name'],
    }),
  )
  console.log(`registered ${info.ownerName}/${info.name} (uid ${info.uid}, ${info.kubernetesVersion}, ${info.nodeCount} nodes)`)
  return 0
}

async function clusterList(args: string[]): Promise<number> {
  const values = parse(args, { owner: { type: 'string' } })
  if (values.help) return print(HELP['cluster list'])
  const rows = await withDeps(loadConfig(), async (deps) => clusters.listAllClusters(deps, statusProbes(deps.clock), values.owner))
  const table = [
    ['OWNER', 'NAME', 'UID', 'SERVER', 'STATUS', 'VERSION', 'NODES', 'AGE'],
    ...rows.map((c) => [c.ownerName, c.name, c.uid, c.endpoint, c.status.phase, c.kubernetesVersion, String(c.nodeCount), c.age]),
  ]
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
  for (const row of table)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
  return 0
}

async function clusterRemove(args: string[]): Promise<number> {
  const values = parse(args, { owner: { type: 'string' }, name: { type: 'string' } })
  if (values.help) return print(HELP['cluster remove'])
  if (!values.owner || !values.name) throw new UsageError('--owner and --name are required')
  await withDeps(loadConfig(), async (deps) =>
    clusters.removeCluster(deps, statusProbes(deps.clock), await operator(deps), values.owner!, values.name!),
  )
  console.log(`removed ${values.owner}/${values.name}`)
  return 0
}

async function msgbusNatsConfig(args: string[]): Promise<number> {
  const values = parse(args, {
    'resolver-dir': { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'websocket-port': { type: 'string' },
  })
  if (values.help) return print(HELP['nats-config'])
  if (!values['resolver-dir']) throw new UsageError('--resolver-dir is required (where nats-server keeps pushed account JWTs)')
  const port = portFlag(values.port ?? '4222', '--port')
  const websocketPort = values['websocket-port'] === undefined ? undefined : portFlag(values['websocket-port'], '--websocket-port')
  const text = await withDeps(loadConfig(), (deps) =>
    natsConfig(deps, {
      resolverDir: resolve(values['resolver-dir']!),
      port,
      host: values.host ?? '0.0.0.0',
      websocketPort,
    }),
  )
  process.stdout.write(text)
  return 0
}

function portFlag(text: string, name: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw new UsageError(`${name} must be a port number 1-65535, got "${text}"`)
  return Number(text)
}

async function serve(args: string[]): Promise<number> {
  const values = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    dev: { type: 'boolean' },
  })
  if (values.help) return print(HELP.serve)
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
    if (code === 'EADDRINUSE') throw new CommandFailed(`port ${config.port} on ${config.host} is already in use (another server running?)`)
    throw new CommandFailed(
      `cannot listen on ${config.host}:${config.port}: ${code ?? (error instanceof Error ? error.message : String(error))}`,
    )
  }
  // Connect to the message bus and push every account's claims, retrying while it is down.
  const stopMsgbus = startMsgbus(deps)
  // Only once the port is ours: a server that cannot listen must not re-point the running one's sandbox.
  const sandbox = config.sandboxCluster ? await startSandbox(deps) : undefined
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
      await sandbox?.stop()
      await stopMsgbus()
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
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`error: ${error.message}`)
      process.exit(2)
    }
    if (error instanceof CommandFailed) {
      console.error(`error: ${error.message}`)
      process.exit(1)
    }
    if (error instanceof AppError) {
      console.error(
        `error: ${error.message}${error.fields.length ? ` (${error.fields.map((f) => `${f.field}: ${f.message}`).join('; ')})` : ''}`,
      )
      process.exit(1)
    }
    console.error(error)
    process.exit(1)
  },
)
