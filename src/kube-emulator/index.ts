/**
 * The Kubernetes API server emulator: `startEmulator` builds a registry with the built-in and
 * virtual resources, starts its controllers, optionally seeds it, and serves it over HTTP(S).
 */
import YAML from 'yaml'
import { appscodeHandlers, appscodeResources } from './appscode'
import { ContainerOutputs } from './container-output'
import type { EmulatorContext, VirtualHandler } from './context'
import { Controllers } from './controllers'
import { ContainerFilesystems } from './filesystem'
import { metricsHandlers, metricsResources } from './metrics'
import { reviewHandler, reviewResource, type UserSpec, whoamiHandler, whoamiResource } from './rbac'
import { Registry } from './registry'
import { seed } from './seed'
import { handle, sessionWebSocket } from './server'
import { COMMAND_NAMES } from './shell'
import { BUILTIN } from './strategies'
import { generateServerTls } from './tls'

export interface EmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number
  /** Interface to listen on; 127.0.0.1 by default. */
  hostname?: string
  /** Serve HTTPS with a freshly generated CA (kubectl only sends tokens over HTTPS). */
  tls?: boolean
  /** With `tls`: further host names the server certificate covers (a name a test resolves itself). */
  certificateNames?: string[]
  /**
   * With `tls`: require a client certificate signed by the emulator's CA (mutual TLS); a request
   * without a bearer token then acts as the certificate's user, cluster-admin (`clientCertPem`).
   */
  clientCertificates?: boolean
  /** The admin bearer token; random when omitted. */
  token?: string
  /** Start with namespaces, nodes, workloads and events; true by default. */
  seed?: boolean
  /** The seeded kube-system namespace's uid (a cluster's identity); random when omitted. */
  clusterUid?: string
  /** Further users by bearer token, optionally limited to namespaces and verbs. */
  users?: Record<string, UserSpec>
  /** How often containers print a log line; 2000 ms by default. */
  logIntervalMs?: number
  /** How often an idle watch gets a keep-alive (a BOOKMARK under allowWatchBookmarks); 5 s by default. */
  bookmarkIntervalMs?: number
  /** How long a watch from a resourceVersion the store has not reached waits for it before ERROR 504; 3 s as the apiserver. */
  tooLargeResourceVersionWaitMs?: number
  /** How many changes watches can resume from; older resourceVersions are 410 Expired. */
  watchHistory?: number
  /**
   * How long an exec holds its command's first output when the client sends nothing first (kubectl
   * sets up its streams only after the handshake); 100 ms by default.
   */
  execStartDelayMs?: number
  /** The time CronJob schedules and container logs are read against; `Date.now` by default (tests move a fake clock). */
  clock?: () => number
  /** How often CronJobs are checked for a due schedule; 10 s by default. */
  cronIntervalMs?: number
  /** Receives one line per request (method, path, status); never tokens or bodies. */
  log?: (line: string) => void
}

export interface Emulator {
  url: string
  token: string
  caCertPem?: string
  /** With `clientCertificates`: a client certificate and key the emulator accepts (cluster-admin). */
  clientCertPem?: string
  clientKeyPem?: string
  /** A kubeconfig (YAML) with one cluster, user and context named `sandbox`. */
  kubeconfig(): string
  /** Store listeners right now (open watches plus the controllers'): how a caller sees a watch open or end. */
  subscribers(): number
  /** Open exec, attach and port-forward WebSockets: how a caller sees such a session end. */
  sessions(): number
  /** Resolves once the controllers have reconciled everything the writes so far set in motion. */
  settled(): Promise<void>
  /** Checks every CronJob's schedule now, as the periodic check does, and resolves once that has settled. */
  checkCronJobs(): Promise<void>
  stop(): Promise<void>
}

/** Builds a registry serving every built-in and virtual resource, with no objects yet. */
function buildRegistry(watchHistory?: number): { registry: Registry; virtual: Map<string, VirtualHandler> } {
  const registry = new Registry(watchHistory)
  for (const [key, { versions, strategy }] of Object.entries(BUILTIN)) {
    const [group, resource] = key.split('/')
    registry.register({ group, resource, versions, strategy })
  }
  for (const r of [...metricsResources, reviewResource, whoamiResource, ...appscodeResources]) registry.register(r)
  const virtual = new Map<string, VirtualHandler>([
    ...metricsHandlers(registry),
    ['authorization.k8s.io/selfsubjectaccessreviews', reviewHandler],
    ['authentication.k8s.io/selfsubjectreviews', whoamiHandler],
    ...appscodeHandlers(registry),
  ])
  return { registry, virtual }
}

const urlHost = (hostname: string) =>
  hostname === '0.0.0.0' || hostname === '::' ? 'localhost' : hostname.includes(':') ? `[${hostname}]` : hostname

/** Names the server certificate covers: loopback always, plus the listening host when it is a specific name or address. */
function certificateHosts(hostname: string): string[] {
  const hosts = ['localhost', '127.0.0.1', '::1']
  const bare = hostname.replace(/^\[|\]$/g, '')
  if (bare !== '0.0.0.0' && bare !== '::' && !hosts.includes(bare)) hosts.push(bare)
  return hosts
}

/** Starts an emulator; resolves once it listens and the seeded workloads have their pods. */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<Emulator> {
  const hostname = opts.hostname ?? '127.0.0.1'
  const token = opts.token ?? Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')
  const users = new Map<string, UserSpec>([
    [token, { name: 'admin', groups: ['system:masters', 'system:authenticated'] }],
    ...Object.entries(opts.users ?? {}),
  ])
  const { registry, virtual } = buildRegistry(opts.watchHistory)
  const outputs = new ContainerOutputs()
  const filesystems = new ContainerFilesystems(COMMAND_NAMES)
  const clock = opts.clock ?? Date.now
  const controllers = new Controllers(registry, outputs, filesystems, { now: clock, cronIntervalMs: opts.cronIntervalMs ?? 10_000 })
  if (opts.seed !== false) {
    seed(registry, opts.clusterUid)
    await controllers.settled()
  }
  const tls = opts.tls ? await generateServerTls([...certificateHosts(hostname), ...(opts.certificateNames ?? [])]) : undefined
  let url = ''
  const ctx: EmulatorContext = {
    registry,
    users,
    virtual,
    log: opts.log,
    outputs,
    filesystems,
    clock,
    ...(opts.tls && opts.clientCertificates
      ? { certificateUser: { name: 'emulator-client', groups: ['system:masters', 'system:authenticated'] } }
      : {}),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 5_000,
    logIntervalMs: opts.logIntervalMs ?? 2000,
    tooLargeResourceVersionWaitMs: opts.tooLargeResourceVersionWaitMs ?? 3_000,
    execStartDelayMs: opts.execStartDelayMs ?? 100,
    serverAddress: () => new URL(url).host,
  }
  const listen = () =>
    Bun.serve({
      port: opts.port ?? 0,
      hostname,
      // Bodies up to this size reach the handler, which answers 413 above 3 MiB as a Status; beyond
      // it Bun refuses them itself, so a huge upload never sits in memory.
      maxRequestBodySize: 8 * 1024 * 1024,
      ...(tls
        ? {
            tls: {
              cert: tls.certPem,
              key: tls.keyPem,
              ...(opts.clientCertificates ? { ca: tls.caCertPem, requestCert: true, rejectUnauthorized: true } : {}),
            },
          }
        : {}),
      async fetch(req, srv) {
        const started = performance.now()
        const res = await handle(ctx, req, srv)
        opts.log?.(`${req.method} ${new URL(req.url).pathname} ${res?.status ?? 101} ${Math.round(performance.now() - started)}ms`)
        return res
      },
      websocket: {
        ...sessionWebSocket,
        open: (ws) => {
          openSessions++
          sessionWebSocket.open(ws)
        },
        close: (ws) => {
          openSessions--
          sessionWebSocket.close(ws)
        },
      },
    })
  let openSessions = 0
  let server: ReturnType<typeof listen>
  try {
    server = listen()
  } catch (error) {
    // A port in use must not leave the controllers' timers running behind the caller's back.
    controllers.stop()
    throw error
  }
  url = `${tls ? 'https' : 'http'}://${urlHost(hostname)}:${server.port}`
  return {
    url,
    token,
    caCertPem: tls?.caCertPem,
    ...(tls && opts.clientCertificates ? { clientCertPem: tls.clientCertPem, clientKeyPem: tls.clientKeyPem } : {}),
    kubeconfig: () =>
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'sandbox',
        preferences: {},
        clusters: [
          {
            name: 'sandbox',
            cluster: { server: url, ...(tls ? { 'certificate-authority-data': Buffer.from(tls.caCertPem).toString('base64') } : {}) },
          },
        ],
        users: [{ name: 'sandbox', user: { token } }],
        contexts: [{ name: 'sandbox', context: { cluster: 'sandbox', user: 'sandbox' } }],
      }),
    subscribers: () => registry.subscriberCount,
    sessions: () => openSessions,
    settled: () => controllers.settled(),
    checkCronJobs: () => {
      controllers.checkCronJobs()
      return controllers.settled()
    },
    async stop() {
      controllers.stop()
      await server.stop(true)
    },
  }
}
