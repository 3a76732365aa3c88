/**
 * pods/portforward over WebSocket, in both forms clients speak:
 * - `SPDY/3.1+portforward.k8s.io` (kubectl 1.31 and later): a SPDY/3.1 session tunnelled in binary
 *   messages. Each local connection opens an error stream, then a data stream, with headers
 *   `streamtype`, `port` and `requestid`; the pair is one connection to the port.
 * - the kubelet's channel protocols (`v4.channel.k8s.io`, `channel.k8s.io` and their base64 forms)
 *   with `?ports=`: port i has a data channel 2i and an error channel 2i+1, each opening with the
 *   port number (two bytes, little-endian); one connection per port for the socket's life.
 * Connections reach the container listening on the port (container-http.ts); a port nobody listens
 * on gets the kubelet's "connection refused" on the error stream.
 */
import type { ServerWebSocket } from 'bun'
import { type KubeObject, kubeStatus } from '../kube'
import { type ConnectionSink, connectHttp, listenerOn, type PodConnection } from './container-http'
import type { WebSocketSession } from './context'
import { chooseProtocol } from './exec'
import {
  CONTROL,
  controlFrame,
  dataFrame,
  FLAG_FIN,
  FrameReader,
  goAway,
  HeaderCodec,
  RST,
  rstStream,
  streamIdOf,
  synReply,
  synStreamOf,
} from './spdy'
import { fieldAt } from './strategies'

const SPDY_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io'
const CHANNEL_PROTOCOLS = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'] as const
const PROTOCOLS = [SPDY_TUNNEL_PROTOCOL, ...CHANNEL_PROTOCOLS] as const

/** Connections (stream pairs) one SPDY session may have open or half-made. */
const MAX_CONNECTIONS = 256
/** Larger DATA frames are a protocol error; client-go writes at most 32 KiB at a time. */
const MAX_DATA_FRAME = 1024 * 1024
const MAX_CONTROL_FRAME = 16 * 1024
const MAX_HEADER_BYTES = 64 * 1024

/** The kubelet's words for a port nothing listens on. */
const refused = (pod: KubeObject, port: number) =>
  `error forwarding port ${port} to pod ${pod.metadata.uid ?? ''}, uid : failed to connect to localhost:${port} inside namespace "${pod.metadata.name ?? ''}": dial tcp4 127.0.0.1:${port}: connect: connection refused`

/** Opens a connection to `port` of `pod`, or answers why not. */
function dial(pod: KubeObject, port: number, sink: ConnectionSink): PodConnection | string {
  const listener = listenerOn(pod, port)
  return listener ? connectHttp(listener, sink) : refused(pod, port)
}

function parsePort(text: string): number | undefined {
  const n = Number(text)
  return /^\d+$/.test(text) && n > 0 && n < 65536 ? n : undefined
}

/** Validates a port-forward request before the upgrade (400s as plain HTTP) and prepares its session. */
export function preparePortForward(
  pod: KubeObject,
  q: URLSearchParams,
  offered: string[],
): { session: WebSocketSession; protocol: string } {
  if (fieldAt(pod, ['status', 'phase']) !== 'Running')
    throw kubeStatus.badRequest(`unable to upgrade connection: pod ${pod.metadata.name} is not running`)
  const protocol = chooseProtocol(offered, PROTOCOLS)
  if (protocol === SPDY_TUNNEL_PROTOCOL) return { session: new SpdyPortForward(pod), protocol }
  const ports = q.getAll('ports').flatMap((v) => v.split(','))
  if (!ports.length) throw kubeStatus.badRequest('query parameter "ports" is required')
  const parsed = ports.map((p) => {
    const port = parsePort(p.trim())
    if (port === undefined) throw kubeStatus.badRequest(`unable to parse "${p}" as a port: must be a number from 1 to 65535`)
    return port
  })
  return { session: new ChannelPortForward(pod, parsed, protocol), protocol }
}

/** The kubelet's channel protocol: fixed ports, two channels each, for the life of the socket. */
class ChannelPortForward implements WebSocketSession {
  private ws: ServerWebSocket<WebSocketSession> | undefined
  private readonly connections: (PodConnection | undefined)[] = []
  private openPorts = 0

  constructor(
    private readonly pod: KubeObject,
    private readonly ports: number[],
    private readonly protocol: string,
  ) {}

  private send(channel: number, payload: Uint8Array) {
    if (this.ws?.readyState !== 1) return
    if (this.protocol.includes('base64')) this.ws.sendText(`${String.fromCharCode(48 + channel)}${Buffer.from(payload).toString('base64')}`)
    else this.ws.sendBinary(Buffer.concat([Uint8Array.of(channel), payload]))
  }

  open(ws: ServerWebSocket<WebSocketSession>) {
    this.ws = ws
    this.ports.forEach((port, i) => {
      const header = Uint8Array.of(port & 0xff, port >> 8)
      this.send(2 * i, header)
      this.send(2 * i + 1, header)
    })
    this.ports.forEach((port, i) => {
      this.openPorts++
      const connection = dial(this.pod, port, { data: (bytes) => this.send(2 * i, bytes), end: () => this.ended(i) })
      if (typeof connection === 'string') {
        this.send(2 * i + 1, new TextEncoder().encode(connection))
        this.ended(i)
      } else this.connections[i] = connection
    })
  }

  /** A port's connection closed; the socket closes with the last. */
  private ended(i: number) {
    this.connections[i] = undefined
    if (--this.openPorts === 0) this.ws?.close(1000)
  }

  receive(message: string | Buffer) {
    let channel: number
    let payload: Uint8Array
    if (typeof message === 'string') {
      if (!this.protocol.includes('base64') || !message) return
      channel = message.charCodeAt(0) - 48
      payload = Buffer.from(message.slice(1), 'base64')
    } else {
      if (!message.length) return
      channel = message[0]
      payload = message.subarray(1)
    }
    if (channel % 2 === 0 && payload.length) this.connections[channel / 2]?.write(payload)
  }

  closed() {
    this.connections.length = 0
  }
}

/** One forwarded connection of a SPDY session: its two streams and, once both exist, the pod's side. */
interface StreamPair {
  port?: number
  errorStream?: number
  dataStream?: number
  connection?: PodConnection
  done: boolean
}

/** kubectl's SPDY session tunnelled in the WebSocket: any number of connections, each a stream pair. */
class SpdyPortForward implements WebSocketSession {
  private ws: ServerWebSocket<WebSocketSession> | undefined
  private readonly reader = new FrameReader({ data: MAX_DATA_FRAME, control: MAX_CONTROL_FRAME })
  private readonly codec = new HeaderCodec(MAX_HEADER_BYTES)
  private readonly pairs = new Map<string, StreamPair>()
  /** Stream id → the request id of its pair. */
  private readonly streams = new Map<number, string>()
  /** Frames are handled one after another: a SYN_STREAM's headers inflate asynchronously. */
  private queue: Promise<void> = Promise.resolve()
  private lastStreamId = 0

  constructor(private readonly pod: KubeObject) {}

  open(ws: ServerWebSocket<WebSocketSession>) {
    this.ws = ws
  }

  private send(frame: Uint8Array) {
    if (this.ws?.readyState === 1) this.ws.sendBinary(frame)
  }

  receive(message: string | Buffer) {
    if (typeof message === 'string') return this.fail('text message in a SPDY session')
    let frames: ReturnType<FrameReader['push']>
    try {
      frames = this.reader.push(message)
    } catch (e) {
      return this.fail(e instanceof Error ? e.message : String(e))
    }
    for (const frame of frames)
      this.queue = this.queue.then(() => this.handle(frame)).catch((e) => this.fail(e instanceof Error ? e.message : String(e)))
  }

  /** A protocol error ends the session: GOAWAY, then the socket closes. */
  private fail(reason: string) {
    this.send(goAway(this.lastStreamId, 1))
    this.ws?.close(1002, reason.slice(0, 120))
  }

  private async handle(frame: ReturnType<FrameReader['push']>[number]): Promise<void> {
    if (!frame.control) return this.data(frame.streamId, frame.flags, frame.data)
    if (frame.type === CONTROL.synStream) return this.synStream(frame.payload)
    if (frame.type === CONTROL.rstStream) return this.reset(streamIdOf(frame.payload))
    if (frame.type === CONTROL.ping) return this.send(controlFrame(CONTROL.ping, 0, frame.payload))
    if (frame.type === CONTROL.goAway) this.ws?.close(1000)
    // SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do (the client does no flow control either).
  }

  private async synStream(payload: Uint8Array) {
    const { streamId, block } = synStreamOf(payload)
    const headers = await this.codec.decode(block)
    this.lastStreamId = Math.max(this.lastStreamId, streamId)
    const header = (name: string) => headers.get(name)?.[0] ?? ''
    const type = header('streamtype')
    const requestId = header('requestid')
    let pair = this.pairs.get(requestId)
    if ((type !== 'data' && type !== 'error') || !requestId || (!pair && this.pairs.size >= MAX_CONNECTIONS) || pair?.[`${type}Stream`]) {
      this.send(rstStream(streamId, requestId ? RST.refusedStream : RST.protocolError))
      return
    }
    if (!pair) this.pairs.set(requestId, (pair = { done: false }))
    pair[`${type}Stream`] = streamId
    if (type === 'data') pair.port = parsePort(header('port'))
    this.streams.set(streamId, requestId)
    this.send(synReply(streamId, await this.codec.encode({})))
    if (pair.dataStream !== undefined && pair.errorStream !== undefined) this.connect(requestId, pair)
  }

  /** Both streams exist: the pod's side of the connection opens, or the error stream says why it cannot. */
  private connect(requestId: string, pair: StreamPair) {
    const dataStream = pair.dataStream!
    const sink: ConnectionSink = {
      data: (bytes) => {
        if (pair.done) return
        for (let at = 0; at < bytes.length; at += MAX_DATA_FRAME)
          this.send(dataFrame(dataStream, 0, bytes.subarray(at, at + MAX_DATA_FRAME)))
      },
      end: () => this.finish(requestId),
    }
    const connection = pair.port === undefined ? 'invalid port' : dial(this.pod, pair.port, sink)
    if (typeof connection === 'string') {
      this.send(dataFrame(pair.errorStream!, 0, new TextEncoder().encode(connection)))
      this.finish(requestId)
    } else pair.connection = connection
  }

  /** The pod's side closed: both streams end (FIN), and the pair is forgotten. */
  private finish(requestId: string) {
    const pair = this.pairs.get(requestId)
    if (!pair || pair.done) return
    pair.done = true
    for (const id of [pair.dataStream, pair.errorStream]) {
      if (id === undefined) continue
      this.send(dataFrame(id, FLAG_FIN, new Uint8Array(0)))
      this.streams.delete(id)
    }
    this.pairs.delete(requestId)
  }

  private data(streamId: number, flags: number, data: Uint8Array) {
    const pair = this.pairs.get(this.streams.get(streamId) ?? '')
    if (!pair || streamId !== pair.dataStream) return
    if (data.length) pair.connection?.write(data)
    if (flags & FLAG_FIN) pair.connection?.end()
  }

  /** The client reset a stream: its connection is dropped without a word. */
  private reset(streamId: number) {
    const requestId = this.streams.get(streamId)
    const pair = requestId === undefined ? undefined : this.pairs.get(requestId)
    if (!pair || requestId === undefined) return
    pair.done = true
    for (const id of [pair.dataStream, pair.errorStream]) if (id !== undefined) this.streams.delete(id)
    this.pairs.delete(requestId)
  }

  closed() {
    for (const pair of this.pairs.values()) pair.done = true
    this.pairs.clear()
    this.streams.clear()
    this.codec.close()
  }
}
