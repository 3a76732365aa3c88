import type { ClusterConnection } from '../clusters/connection'
import { messageOf } from '../errors'
import { BunWebSocket, clientTransport } from '../net/tunnel/client-socket'
import { decode, encode, Frame } from '../net/tunnel/frames'
import { Tunnel, type TunnelStream } from '../net/tunnel/mux'
import { newPiped, type Piped, pipe, pipeHandlers } from '../net/tunnel/socket-pipe'

/**
 * The agent (docs/agents.md, "The agent"): keeps one tunnel open to the platform, reconnecting
 * after a loss (1 s doubling to 30 s, with jitter), and connects each stream the platform opens to
 * its own API server, the one address it ever dials. It relays bytes: the platform's TLS runs to
 * the API server inside the stream, so the agent sees no request.
 */

export interface AgentOptions {
  /** The platform's URL (http or https). */
  platform: string
  token: string
  /** PEM of the CA the platform's certificate must chain to; the system roots when absent. */
  platformCa?: string
  /** The API server; asked again before each connection (a pod's token is rotated). */
  target: () => ClusterConnection
  version: string
  log(event: string, fields?: Record<string, unknown>): void
  /** Ends the agent (SIGTERM): the tunnel closes and no reconnection follows. */
  signal: AbortSignal
}

/** The first retry waits about this long, each next one twice as long, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1_000
const MAX_BACKOFF_MS = 30_000
const TICK_MS = 1_000
/** How long a connection may take to be welcomed (or refused) by the platform. */
const WELCOME_TIMEOUT_MS = 15_000

/** Runs until `signal` aborts. */
export async function runAgent(options: AgentOptions): Promise<void> {
  let failures = 0
  while (!options.signal.aborted) {
    const outcome = await connectOnce(options).catch((error: unknown) => ({ welcomed: false, reason: messageOf(error) }))
    if (options.signal.aborted) return
    failures = outcome.welcomed ? 0 : failures + 1
    const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1))
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
    options.log('agent disconnected', { reason: outcome.reason, retryInMs: delay })
    await sleep(delay, options.signal)
  }
}

/** The cluster's facts the platform asks for in the hello, read from the API server. */
async function helloOf(options: AgentOptions, target: ClusterConnection): Promise<Uint8Array> {
  const get = async <T>(path: string): Promise<T> => {
    const answer = await fetch(`${target.server}${path}`, {
      headers: { accept: 'application/json', ...authorizationOf(target) },
      tls: tlsOf(target),
      signal: AbortSignal.timeout(10_000),
    } as RequestInit)
    if (!answer.ok) throw new Error(`the API server answered ${answer.status} for ${path}`)
    return (await answer.json()) as T
  }
  const [version, kubeSystem, nodes] = await Promise.all([
    get<{ gitVersion?: string }>('/version'),
    get<{ metadata?: { uid?: string } }>('/api/v1/namespaces/kube-system'),
    get<{ items?: unknown[]; metadata?: { remainingItemCount?: number } }>('/api/v1/nodes?limit=1'),
  ])
  const uid = kubeSystem.metadata?.uid
  if (!uid) throw new Error('the API server has no kube-system namespace uid')
  const hello = {
    agentVersion: options.version,
    uid,
    kubernetesVersion: version.gitVersion ?? '',
    nodeCount: (nodes.items?.length ?? 0) + (nodes.metadata?.remainingItemCount ?? 0),
    server: target.server,
    caData: target.caData,
    tlsServerName: target.tlsServerName,
    credential: target.credential,
  }
  return encode(Frame.hello, 0, new TextEncoder().encode(JSON.stringify(hello)))
}

/** One connection: hello, welcome, then streams until it ends. Resolves with whether it was welcomed and why it ended. */
async function connectOnce(options: AgentOptions): Promise<{ welcomed: boolean; reason: string }> {
  const target = options.target()
  const hello = await helloOf(options, target)
  const url = `${options.platform.replace(/^http/, 'ws').replace(/\/+$/, '')}/api/v1/agent/connect`
  const socket = new BunWebSocket(url, {
    headers: { authorization: `Bearer ${options.token}` },
    ...(options.platformCa ? { tls: { ca: options.platformCa } } : {}),
  })
  socket.binaryType = 'arraybuffer'
  return new Promise((resolve) => {
    let tunnel: Tunnel | undefined
    const welcomeBy = setTimeout(() => socket.close(4008, 'no welcome in time'), WELCOME_TIMEOUT_MS)
    const ticker = setInterval(() => tunnel?.tick(Date.now()), TICK_MS)
    const stop = () => socket.close(1001, 'the agent is stopping')
    options.signal.addEventListener('abort', stop, { once: true })
    socket.addEventListener('open', () => socket.send(hello))
    socket.addEventListener('message', (event) => {
      const message = new Uint8Array(event.data as ArrayBuffer)
      if (tunnel) return tunnel.receive(message)
      if (decode(message)?.type !== Frame.welcome) return socket.close(1002, 'expected the welcome')
      clearTimeout(welcomeBy)
      tunnel = new Tunnel(clientTransport(socket), {
        role: 'agent',
        now: Date.now,
        incoming: (stream, accept, refuse) => dialApiServer(target, stream, accept, refuse),
      })
      options.log('agent connected', { platform: options.platform, server: target.server })
    })
    socket.addEventListener('close', (event) => {
      clearTimeout(welcomeBy)
      clearInterval(ticker)
      options.signal.removeEventListener('abort', stop)
      tunnel?.close(event.reason || 'the connection closed')
      resolve({ welcomed: tunnel !== undefined, reason: event.reason || `closed (${event.code})` })
    })
  })
}

/** Connects a stream the platform opened to the API server's address, and only to it. */
export function dialApiServer(target: ClusterConnection, stream: TunnelStream, accept: () => void, refuse: (reason: string) => void): void {
  const url = new URL(target.server)
  Bun.connect<Piped>({
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 443),
    data: newPiped(),
    socket: {
      ...pipeHandlers,
      open(socket) {
        // The platform reset the stream (its open timed out) while this dial was under way.
        if (stream.closed) return void socket.end()
        accept()
        pipe(socket, stream)
      },
      connectError(_socket, error) {
        refuse(`the API server did not accept the connection (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
      },
    },
  }).catch((error: unknown) => refuse(`the API server could not be dialled (${messageOf(error)})`))
}

const authorizationOf = (target: ClusterConnection): Record<string, string> =>
  'token' in target.credential ? { authorization: `Bearer ${target.credential.token}` } : {}

const tlsOf = (target: ClusterConnection) => ({
  ...(target.caData ? { ca: target.caData } : {}),
  ...('clientCertificate' in target.credential ? { cert: target.credential.clientCertificate, key: target.credential.clientKey } : {}),
  ...(target.tlsServerName ? { serverName: target.tlsServerName } : {}),
})

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
