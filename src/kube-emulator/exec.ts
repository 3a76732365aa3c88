/**
 * pods/exec and pods/attach over WebSocket: the channel protocols (v5, v4, v1 and their base64
 * forms) carrying a program's stdin, stdout, stderr, resizes and final Status. exec runs a command
 * of the built-in shell; no process is ever spawned: commands are functions over the session's streams.
 */
import type { ServerWebSocket } from 'bun'
import { execStreamFailure, execStreamStatus, isObject, type KubeObject, kubeStatus } from '../kube'
import type { WebSocketSession } from './context'
import type { ContainerFs } from './filesystem'
import { queryFlag } from './handlers/request'
import { chooseContainer, containerStartedAt } from './logs'
import { type Io, runCommand } from './shell'
import { fieldAt } from './strategies'

/** Subprotocols in our order of preference when a client offers several. */
const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'] as const
type Protocol = (typeof PROTOCOLS)[number] | ''

const MAX_LINE = 1024 * 1024
const STDIN = 0,
  STDOUT = 1,
  STDERR = 2,
  ERROR = 3,
  RESIZE = 4,
  CLOSE = 255

/** The subprotocol to answer from the client's offer (`''` when it offered none); throws 400 when none is supported. */
export function chooseProtocol<P extends string>(offered: string[], supported: readonly P[]): P | '' {
  const protocol = offered.length ? supported.find((p) => offered.includes(p)) : ''
  if (protocol === undefined)
    throw kubeStatus.badRequest(
      `unable to upgrade connection: none of the requested subprotocols is supported: ${offered.join(', ')}; supported: ${supported.join(', ')}`,
    )
  return protocol
}

/** A stream request's checks before the upgrade (the kubelet's 400s as plain HTTP): which streams, the container, running. */
export function streamRequest(pod: KubeObject, q: URLSearchParams, offered: string[]) {
  const tty = queryFlag(q, 'tty')
  const streams = { stdin: queryFlag(q, 'stdin'), stdout: queryFlag(q, 'stdout'), stderr: queryFlag(q, 'stderr') && !tty }
  if (!streams.stdin && !streams.stdout && !queryFlag(q, 'stderr'))
    throw kubeStatus.badRequest('you must specify at least 1 of stdin, stdout, stderr')
  const container = chooseContainer(pod, q.get('container'))
  if (fieldAt(pod, ['status', 'phase']) !== 'Running' || containerStartedAt(pod, container) === undefined)
    throw kubeStatus.badRequest(`unable to upgrade connection: container not found ("${container}")`)
  return { tty, streams, container, protocol: chooseProtocol(offered, PROTOCOLS) }
}

/** What an exec runs with besides its streams: the container's files and the cluster's Services. */
export interface ExecEnvironment {
  fs: ContainerFs
  lookupService: Io['lookupService']
  startDelayMs: number
}

/** Validates an exec request before the upgrade (400s and 404s as plain HTTP) and prepares its session. */
export function prepareExec(
  pod: KubeObject,
  q: URLSearchParams,
  offered: string[],
  environment: (container: string) => ExecEnvironment,
): { session: StreamSession; protocol: Protocol } {
  const command = q.getAll('command')
  const { tty, streams, container, protocol } = streamRequest(pod, q, offered)
  if (!command.length) throw kubeStatus.badRequest('you must specify at least one command for the container')
  const { fs, lookupService, startDelayMs } = environment(container)
  const env = containerEnv(pod, container)
  const hostname = pod.metadata.name ?? ''
  const program: Program = (session) => runCommand(command, { ...session, env, hostname, fs, lookupService })
  return { session: new StreamSession({ protocol, streams, tty, startDelayMs, program, command }), protocol }
}

function containerEnv(pod: KubeObject, container: string): Record<string, string> {
  const containers = fieldAt(pod, ['spec', 'containers'])
  const c = Array.isArray(containers) ? containers.filter(isObject).find((x) => x.name === container) : undefined
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: pod.metadata.name ?? '',
    HOME: '/root',
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
  }
  for (const e of Array.isArray(c?.env) ? c.env.filter(isObject) : []) if (typeof e.name === 'string') env[e.name] = String(e.value ?? '')
  return env
}

/** Bytes arriving on channel 0, read by commands as chunks or lines until the client closes stdin. */
class Stdin {
  private chunks: Uint8Array[] = []
  private ended = false
  private wake: (() => void) | undefined
  private pending = ''
  private readonly decoder = new TextDecoder()

  push(bytes: Uint8Array) {
    this.chunks.push(bytes)
    this.wake?.()
  }
  end() {
    this.ended = true
    this.wake?.()
  }

  /** The next chunk, or null at end of input. */
  async read(): Promise<Uint8Array | null> {
    while (!this.pending && !this.chunks.length && !this.ended)
      await new Promise<void>((resolve) => {
        this.wake = resolve
      })
    this.wake = undefined
    if (this.pending) {
      const p = new TextEncoder().encode(this.pending)
      this.pending = ''
      return p
    }
    return this.chunks.shift() ?? null
  }

  /** The next line without its terminator (`\n` or a terminal's `\r`), or null at end of input. */
  async readLine(): Promise<string | null> {
    for (;;) {
      const lf = this.pending.indexOf('\n')
      const cr = this.pending.indexOf('\r')
      const cut = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr)
      if (cut >= 0) {
        const line = this.pending.slice(0, cut)
        this.pending = this.pending.slice(cut + 1)
        return line
      }
      // An endless line is cut at MAX_LINE, so a client cannot make the buffer grow without bound.
      if (this.pending.length > MAX_LINE) {
        const line = this.pending.slice(0, MAX_LINE)
        this.pending = this.pending.slice(MAX_LINE)
        return line
      }
      while (!this.chunks.length && !this.ended)
        await new Promise<void>((resolve) => {
          this.wake = resolve
        })
      this.wake = undefined
      const chunk = this.chunks.shift()
      if (!chunk) {
        const rest = this.pending
        this.pending = ''
        return rest || null
      }
      this.pending += this.decoder.decode(chunk, { stream: true })
    }
  }
}

/** The session's part of a program's Io: its streams, terminal and cancellation. */
type SessionStreams = Pick<Io, 'stdin' | 'out' | 'err' | 'signal' | 'tty' | 'size'>

/** What a session runs: its exit code, or a message when it could not run at all. */
export type Program = (streams: SessionStreams) => Promise<number | string>

export interface StreamSessionOptions {
  protocol: Protocol
  streams: { stdin: boolean; stdout: boolean; stderr: boolean }
  tty: boolean
  /** How long the program's first output waits for the client's first frame (see `open`). */
  startDelayMs: number
  program: Program
  /** What a non-zero exit's Status names as the command. */
  command: string[]
}

/** One exec or attach connection: frames in, the program's output frames out, then a status and a normal close. */
export class StreamSession implements WebSocketSession {
  private ws: ServerWebSocket<WebSocketSession> | undefined
  private readonly stdin = new Stdin()
  private readonly abort = new AbortController()
  private size = { width: 80, height: 24 }
  private startTimer: ReturnType<typeof setTimeout> | undefined
  private started = false

  private readonly protocol: Protocol
  private readonly streams: StreamSessionOptions['streams']
  private readonly tty: boolean

  constructor(private readonly options: StreamSessionOptions) {
    ;({ protocol: this.protocol, streams: this.streams, tty: this.tty } = options)
    if (!this.streams.stdin) this.stdin.end()
  }

  private get base64() {
    return this.protocol.includes('base64')
  }
  /** v4 and v5 report a JSON Status on channel 3; older protocols a plain-text error. */
  private get jsonStatus() {
    return this.protocol.startsWith('v4') || this.protocol.startsWith('v5')
  }

  private send(channel: number, payload: Uint8Array) {
    if (this.ws?.readyState !== 1) return
    if (this.base64) this.ws.sendText(`${channel}${Buffer.from(payload).toString('base64')}`)
    else {
      const frame = new Uint8Array(payload.length + 1)
      frame[0] = channel
      frame.set(payload, 1)
      this.ws.sendBinary(frame)
    }
  }

  /** Text goes out with a terminal's line ends under tty; bytes as they are. */
  private write(channel: number, data: string | Uint8Array) {
    if (!data.length) return
    const out = typeof data === 'string' ? new TextEncoder().encode(this.tty ? data.replace(/\r?\n/g, '\r\n') : data) : data
    if (channel === STDOUT && !this.streams.stdout) return
    if (channel === STDERR && !this.streams.stderr) return this.tty && this.streams.stdout ? this.send(STDOUT, out) : undefined
    this.send(channel, out)
  }

  /**
   * client-go registers its stdout/stderr/error streams only after the handshake, in a goroutine
   * racing its reader: a frame arriving in the same read as the 101 is dropped ("Unknown stream id
   * 1, discarding message"), and a close that early fails stream setup ("closed all streams"). So
   * the session starts (ready signal, then the command) at the client's first frame (stdin, resize:
   * its streams exist by then) or after `startDelayMs`, as a real process start takes a moment too.
   */
  open(ws: ServerWebSocket<WebSocketSession>) {
    this.ws = ws
    this.startTimer = setTimeout(() => this.start(), this.options.startDelayMs)
  }

  private start() {
    clearTimeout(this.startTimer)
    if (this.started || this.abort.signal.aborted) return
    this.started = true
    // The "ready" signal: an empty message on the lowest writable channel.
    this.send(this.streams.stdout ? STDOUT : this.streams.stderr ? STDERR : ERROR, new Uint8Array(0))
    void this.run()
  }

  private async run() {
    const streams: SessionStreams = {
      stdin: this.stdin,
      out: (data) => this.write(STDOUT, data),
      err: (text) => this.write(STDERR, text),
      signal: this.abort.signal,
      tty: this.tty,
      size: () => this.size,
    }
    const result = await this.options.program(streams)
    if (this.abort.signal.aborted || !this.ws) return
    if (typeof result === 'string') this.finish(result)
    else this.finish(undefined, result)
  }

  private finish(failure: string | undefined, exitCode = 0) {
    if (this.jsonStatus) {
      const status = failure ? execStreamFailure(failure) : execStreamStatus(exitCode, this.options.command)
      this.send(ERROR, new TextEncoder().encode(JSON.stringify(status)))
    } else if (failure || exitCode) {
      this.send(ERROR, new TextEncoder().encode(failure ?? execStreamStatus(exitCode, this.options.command).message ?? ''))
    }
    this.ws?.close(1000)
  }

  receive(message: string | Buffer) {
    let channel: number, payload: Uint8Array
    if (typeof message === 'string') {
      if (!this.base64 || !message) return
      channel = message.charCodeAt(0) - 48
      payload = new Uint8Array(Buffer.from(message.slice(1), 'base64'))
    } else {
      if (!message.length) return
      channel = message[0]
      payload = new Uint8Array(message.subarray(1))
    }
    // A first frame means the client's streams exist: the ready signal goes out before any echo.
    this.start()
    if (channel === STDIN) this.receiveStdin(payload)
    else if (channel === RESIZE) this.resize(payload)
    else if (channel === CLOSE && this.protocol === 'v5.channel.k8s.io' && payload[0] === STDIN) this.stdin.end()
  }

  private receiveStdin(payload: Uint8Array) {
    if (!this.streams.stdin) return
    // A terminal in raw mode relies on the remote side to echo what is typed.
    if (this.tty) this.write(STDOUT, new TextDecoder().decode(payload).replace(/\r/g, '\n'))
    // Ctrl-D on a terminal ends input, as the line discipline would.
    if (this.tty && payload.includes(4)) {
      this.stdin.end()
      return
    }
    this.stdin.push(payload)
  }

  private resize(payload: Uint8Array) {
    try {
      const size: unknown = JSON.parse(new TextDecoder().decode(payload))
      if (isObject(size) && typeof size.Width === 'number' && typeof size.Height === 'number')
        this.size = { width: size.Width, height: size.Height }
    } catch {
      /* a malformed resize is ignored, as the kubelet does */
    }
  }

  closed() {
    clearTimeout(this.startTimer)
    this.abort.abort()
    this.stdin.end()
  }
}
