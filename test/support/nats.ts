import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { connect as tcpConnect } from 'node:net'
import { join } from 'node:path'
import { type ConnectionOptions, connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node'
import { stopChild, stopWithScope } from './children'
import { freePort } from './ports'
import { MAIN } from './process'

const NATS_SERVER = '/usr/sbin/nats-server'

/** Runs `msgbus nats-config` over `dataDir` as an operator would, returning the printed configuration. */
function printNatsConfig(dataDir: string, args: string[]): string {
  const run = Bun.spawnSync([process.execPath, MAIN, 'msgbus', 'nats-config', ...args], {
    env: { ...process.env, PLATFORM_DATA_DIR: dataDir },
  })
  if (run.exitCode !== 0) throw new Error(`nats-config failed: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

export interface NatsServer {
  url: string
  port: number
  websocketPort: number
  /** The resolver directory (pushed account JWTs). */
  resolverDir: string
  configFile: string
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * Debian's nats-server, configured by the platform's own `msgbus nats-config` over `dataDir`,
 * in a directory of its own on free loopback ports. Not started yet; once started, it stops after
 * the test (or file) that started it.
 */
export function natsServer(dataDir: string, dir: string, ports: { port: number; websocketPort?: number }): NatsServer {
  const resolverDir = join(dir, 'jwt')
  mkdirSync(resolverDir, { recursive: true })
  const websocketPort = ports.websocketPort ?? freePort()
  const configFile = join(dir, 'nats.conf')
  writeFileSync(
    configFile,
    printNatsConfig(dataDir, [
      '--resolver-dir',
      resolverDir,
      '--port',
      String(ports.port),
      '--host',
      '127.0.0.1',
      '--websocket-port',
      String(websocketPort),
    ]),
  )
  let child: Bun.Subprocess | undefined
  return {
    url: `nats://127.0.0.1:${ports.port}`,
    port: ports.port,
    websocketPort,
    resolverDir,
    configFile,
    async start() {
      child = stopWithScope(Bun.spawn([NATS_SERVER, '-c', configFile], { stdout: 'ignore', stderr: 'ignore' }))
      await waitForPort(ports.port)
    },
    async stop() {
      if (!child) return
      await stopChild(child)
      child = undefined
    },
  }
}

/** Empties the resolver directory: the server forgets every pushed update (preload only). */
export function wipeResolverDir(server: NatsServer): void {
  rmSync(server.resolverDir, { recursive: true, force: true })
  mkdirSync(server.resolverDir, { recursive: true })
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect({ host: '127.0.0.1', port }, () => {
        socket.destroy()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    if (open) return
    await Bun.sleep(50)
  }
  throw new Error(`nats-server did not listen on ${port}`)
}

/**
 * One-shot client connection with base64 `.creds` from the API (no reconnects: refusals surface at
 * once); `options` adds client settings such as `inboxPrefix`.
 */
export function connectWithCredentials(
  url: string,
  credentials: string,
  options: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  return connect({
    servers: url,
    authenticator: credsAuthenticator(Buffer.from(credentials, 'base64')),
    reconnect: false,
    timeout: 3000,
    ...options,
  })
}

/** The error a connect attempt ends with, or undefined when it connected (and was closed again). */
export async function connectRefusal(url: string, credentials: string): Promise<string | undefined> {
  try {
    const nc = await connectWithCredentials(url, credentials)
    await nc.close()
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * Resolves once the wall clock has entered the next second: jwt.js stamps `iat` to the second
 * from the wall clock, and nats-server keeps the newer of two account JWTs by it.
 */
export async function nextWallSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000)
  while (Math.floor(Date.now() / 1000) === second) await Bun.sleep(1000 - (Date.now() % 1000) + 1)
}

/**
 * The message of the first error the server reports to `nc` (a permissions violation, ...): the
 * server answers in order, so awaited after a flush it is the first refused operation's.
 */
export async function firstServerError(nc: NatsConnection): Promise<string | undefined> {
  for await (const s of nc.status()) if (s.type === 'error') return String(s.error.message)
  return undefined
}

/** Milliseconds until `nc` closes, or undefined when it is still open after `withinMs`. */
export async function closesWithin(nc: NatsConnection, withinMs: number, since = performance.now()): Promise<number | undefined> {
  const closed = await Promise.race([nc.closed().then(() => true), Bun.sleep(withinMs).then(() => false)])
  return closed ? performance.now() - since : undefined
}

/** True when a message published on `subject` by `from` reaches a subscriber `to` within a short wait. */
export async function delivers(from: NatsConnection, to: NatsConnection, subject: string): Promise<boolean> {
  const received = new Promise<boolean>((resolve) => {
    const sub = to.subscribe(subject, { max: 1, callback: (err) => resolve(!err) })
    setTimeout(() => {
      sub.unsubscribe()
      resolve(false)
    }, 500)
  })
  await to.flush()
  from.publish(subject, 'hello')
  await from.flush().catch(() => undefined)
  return received
}
