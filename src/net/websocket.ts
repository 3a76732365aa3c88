import { createHash, randomBytes } from 'node:crypto'
import { connect as connectTcp, type Socket } from 'node:net'
import { connect as connectTls } from 'node:tls'
import { type Dialed, encodeRequest, headerLine, type OriginTls, type RequestHeaders } from './http1/request'

/**
 * A WebSocket client (RFC 6455) of our own, because Bun's joins repeated request headers into one
 * line (`a, b`) and a Kubernetes server reads each `Impersonate-Group` line as one group. It
 * writes its handshake with the kept-alive client's encoding (one line per value, the same checks),
 * over a connection to an address the caller dialled, with the caller's TLS settings.
 */

/** A frame or a message larger than this ends the session (1009): a peer cannot make us hold more. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024
/** The handshake's answer head may be no longer than this. */
const MAX_HANDSHAKE_BYTES = 64 * 1024
const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const

/** The server answered the handshake with something other than 101 (or a 101 that does not check out). */
export class NotUpgraded extends Error {}

export interface WebSocketTarget {
  dialed: Dialed
  /** undefined: plain TCP. */
  tls: OriginTls | undefined
  hostHeader: string
  /** The request path (and query), percent-encoded. */
  path: string
  headers: RequestHeaders
  /** The credential's Authorization value, if it is a bearer token. */
  authorization: string | undefined
  /** The subprotocols offered, in order (sent as they are: Kubernetes offers names with a `/`). */
  protocols: string[]
}

interface SocketEvents {
  message: { data: string | ArrayBuffer }
  close: { code: number; reason: string }
}
type Listener<K extends keyof SocketEvents> = (event: SocketEvents[K]) => void

/** An open connection: the part of the WebSocket API the proxy's relay uses. */
export class ClientWebSocket {
  private readonly listeners: { [K in keyof SocketEvents]: { listener: Listener<K>; once: boolean }[] } = { message: [], close: [] }
  private buffered: Buffer = Buffer.alloc(0)
  private fragments: Buffer[] = []
  private fragmentsBytes = 0
  private fragmentOpcode = 0
  private closeSent = false
  private closed = false

  constructor(
    private readonly socket: Socket,
    readonly protocol: string,
  ) {
    socket.on('data', (chunk: Buffer) => this.read(chunk))
    socket.on('close', () => this.ended(1006, ''))
    socket.on('error', () => socket.destroy())
  }

  /** Bytes written but not yet sent to the peer. */
  get bufferedAmount(): number {
    return this.socket.writableLength
  }

  addEventListener<K extends keyof SocketEvents>(type: K, listener: Listener<K>, options?: { once?: boolean }): void {
    this.listeners[type].push({ listener, once: options?.once ?? false } as never)
  }

  send(data: string | Uint8Array): void {
    if (this.closeSent || this.closed) return
    this.writeFrame(typeof data === 'string' ? OPCODE.text : OPCODE.binary, typeof data === 'string' ? Buffer.from(data) : data)
  }

  /** Starts the close handshake (the peer's close frame ends the connection); a second call does nothing. */
  close(code = 1000, reason = ''): void {
    if (this.closeSent || this.closed) return
    const payload = Buffer.alloc(2 + Math.min(Buffer.byteLength(reason), 123))
    payload.writeUInt16BE(code)
    payload.write(reason, 2)
    this.writeFrame(OPCODE.close, payload)
    this.closeSent = true
    // A peer that never answers the close frame does not hold the connection.
    setTimeout(() => this.socket.destroy(), 5_000).unref()
  }

  /** Bytes that followed the handshake's answer. */
  read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk
    for (;;) {
      const frame = parseFrame(this.buffered)
      if (frame === 'incomplete') return
      if (frame === 'invalid') return this.fail(1002)
      if (frame === 'too large') return this.fail(1009)
      this.buffered = this.buffered.subarray(frame.length)
      this.frame(frame.fin, frame.opcode, frame.payload)
      if (this.closed) return
    }
  }

  private frame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode >= OPCODE.close) {
      if (!fin || payload.length > 125) return this.fail(1002)
      if (opcode === OPCODE.ping) this.writeFrame(OPCODE.pong, payload)
      else if (opcode === OPCODE.close) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005
        const reason = payload.length > 2 ? payload.subarray(2).toString() : ''
        if (!this.closeSent) this.writeFrame(OPCODE.close, payload.subarray(0, 2))
        this.closeSent = true
        this.socket.end()
        this.ended(code, reason)
      } else if (opcode !== OPCODE.pong) this.fail(1002)
      return
    }
    if ((opcode === OPCODE.continuation) === (this.fragments.length === 0)) return this.fail(1002)
    if (opcode !== OPCODE.continuation && opcode !== OPCODE.text && opcode !== OPCODE.binary) return this.fail(1002)
    if (opcode !== OPCODE.continuation) this.fragmentOpcode = opcode
    this.fragments.push(payload)
    if ((this.fragmentsBytes += payload.length) > MAX_MESSAGE_BYTES) return this.fail(1009)
    if (!fin) return
    const message = Buffer.concat(this.fragments)
    this.fragments = []
    this.fragmentsBytes = 0
    const data =
      this.fragmentOpcode === OPCODE.text
        ? message.toString()
        : message.buffer.slice(message.byteOffset, message.byteOffset + message.byteLength)
    this.emit('message', { data: data as string | ArrayBuffer })
  }

  /** A protocol error or an oversized message: the close frame says why, the connection ends. */
  private fail(code: number): void {
    this.close(code)
    this.socket.end()
    this.ended(code, '')
  }

  private ended(code: number, reason: string): void {
    if (this.closed) return
    this.closed = true
    this.emit('close', { code, reason })
  }

  private emit<K extends keyof SocketEvents>(type: K, event: SocketEvents[K]): void {
    const listeners = this.listeners[type] as { listener: Listener<K>; once: boolean }[]
    for (const entry of [...listeners]) {
      if (entry.once) listeners.splice(listeners.indexOf(entry), 1)
      entry.listener(event)
    }
  }

  /** A client frame: final, masked (RFC 6455 §5.3). */
  private writeFrame(opcode: number, payload: Uint8Array): void {
    const length = payload.length
    const head = Buffer.alloc(length < 126 ? 6 : length < 65536 ? 8 : 14)
    head[0] = 0x80 | opcode
    if (length < 126) head[1] = 0x80 | length
    else if (length < 65536) {
      head[1] = 0x80 | 126
      head.writeUInt16BE(length, 2)
    } else {
      head[1] = 0x80 | 127
      head.writeBigUInt64BE(BigInt(length), 2)
    }
    const mask = randomBytes(4)
    mask.copy(head, head.length - 4)
    const masked = Buffer.allocUnsafe(length)
    for (let i = 0; i < length; i++) masked[i] = payload[i]! ^ mask[i & 3]!
    this.socket.write(Buffer.concat([head, masked]))
  }
}

type Parsed = { fin: boolean; opcode: number; payload: Buffer; length: number } | 'incomplete' | 'invalid' | 'too large'

/** One server frame from the front of `bytes`: unmasked (a masked server frame is a protocol error), no extension bits. */
function parseFrame(bytes: Buffer): Parsed {
  if (bytes.length < 2) return 'incomplete'
  if ((bytes[0]! & 0x70) !== 0 || (bytes[1]! & 0x80) !== 0) return 'invalid'
  let length = bytes[1]! & 0x7f
  let offset = 2
  if (length === 126) {
    if (bytes.length < 4) return 'incomplete'
    length = bytes.readUInt16BE(2)
    offset = 4
  } else if (length === 127) {
    if (bytes.length < 10) return 'incomplete'
    const long = bytes.readBigUInt64BE(2)
    if (long > BigInt(MAX_MESSAGE_BYTES)) return 'too large'
    length = Number(long)
    offset = 10
  }
  if (length > MAX_MESSAGE_BYTES) return 'too large'
  if (bytes.length < offset + length) return 'incomplete'
  return {
    fin: (bytes[0]! & 0x80) !== 0,
    opcode: bytes[0]! & 0x0f,
    payload: bytes.subarray(offset, offset + length),
    length: offset + length,
  }
}

/**
 * Connects to `target` and completes the handshake: resolves with the open socket once the server
 * switched protocols with the right Sec-WebSocket-Accept and one of the protocols offered (or none).
 * `onConnection` gets a way to end the attempt (the caller's deadline). Rejects with NotUpgraded
 * (any other answer) or the connection's error. Throws UnsafeRequest (a header that cannot be written).
 */
export function openWebSocket(target: WebSocketTarget, onConnection: (abort: () => void) => void): Promise<ClientWebSocket> {
  const key = randomBytes(16).toString('base64')
  const request = encodeRequest(
    {
      dial: async () => target.dialed,
      tls: target.tls,
      hostHeader: target.hostHeader,
      basePath: '',
      fixedHeaders: target.authorization ? headerLine('authorization', target.authorization) : '',
    },
    {
      method: 'GET',
      path: target.path,
      headers: {
        ...target.headers,
        upgrade: 'websocket',
        'sec-websocket-key': key,
        'sec-websocket-version': '13',
        ...(target.protocols.length ? { 'sec-websocket-protocol': target.protocols.join(', ') } : {}),
      },
      body: null,
      timeoutMs: 0,
    },
  )
  // encodeRequest leaves Connection to its own client: the handshake names it.
  const head = Buffer.from(request)
    .toString('latin1')
    .replace(/\r\n\r\n$/, '\r\nconnection: Upgrade\r\n\r\n')
  const { address, port } = target.dialed
  const tls = target.tls
  const socket = tls
    ? connectTls({
        host: address,
        port,
        servername: tls.serverName,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        rejectUnauthorized: tls.rejectUnauthorized,
      })
    : connectTcp({ host: address, port })
  onConnection(() => socket.destroy())
  return new Promise((resolve, reject) => {
    let answer = Buffer.alloc(0)
    const failed = (error: Error) => {
      socket.destroy()
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk])
      const end = answer.indexOf('\r\n\r\n')
      if (end < 0) {
        if (answer.length > MAX_HANDSHAKE_BYTES) failed(new NotUpgraded('handshake answer too long'))
        return
      }
      socket.off('data', onData)
      socket.off('error', failed)
      socket.off('close', onClose)
      const lines = answer.subarray(0, end).toString('latin1').split('\r\n')
      const headers = new Map<string, string>()
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':')
        if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
      }
      const expected = createHash('sha1')
        .update(key + ACCEPT_GUID)
        .digest('base64')
      const protocol = headers.get('sec-websocket-protocol') ?? ''
      if (
        !/^HTTP\/1\.1 101\b/.test(lines[0] ?? '') ||
        headers.get('upgrade')?.toLowerCase() !== 'websocket' ||
        headers.get('sec-websocket-accept') !== expected ||
        (protocol !== '' && !target.protocols.includes(protocol))
      )
        return failed(new NotUpgraded('the server did not switch protocols'))
      const ws = new ClientWebSocket(socket, protocol)
      resolve(ws)
      const rest = answer.subarray(end + 4)
      if (rest.length) ws.read(rest)
    }
    const onClose = () => reject(new NotUpgraded('the connection closed during the handshake'))
    socket.on('data', onData)
    socket.on('error', failed)
    socket.on('close', onClose)
    socket.write(head)
  })
}
