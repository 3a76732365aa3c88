import { creditOf, type DecodedFrame, decode, encode, encodeCredit, encodeText, Frame, MAX_DATA_BYTES, reasonOf } from './frames'

/**
 * Many byte streams over one WebSocket (docs/agents.md, "The tunnel protocol"). Only the platform
 * opens streams; the agent connects each to its one API server. Every stream has its own window:
 * a sender may have at most WINDOW_BYTES unacknowledged, and the receiver grants more only as its
 * consumer takes bytes, so a reader that stops holds at most one window and stalls no other stream.
 * A peer that breaks a rule (a frame that does not decode, data beyond the window or after FIN, an
 * agent opening a stream) loses the whole tunnel: it is either broken or hostile.
 *
 * The mux owns no timer: its owner calls `tick` (pings, silence, open deadlines), so a process with
 * thousands of idle tunnels runs one timer, not thousands.
 */

/** Bytes a sender may have in flight on one stream before the receiver grants more. */
export const WINDOW_BYTES = 256 * 1024
/** Credits are sent once this many bytes were consumed (or the consumer caught up). */
const CREDIT_BATCH_BYTES = WINDOW_BYTES / 4
/** Streams open at once on one tunnel: with the window, what one tunnel may hold (64 MiB). */
export const MAX_STREAMS = 256
/** A tunnel that hears nothing for this long is dead (a half-open connection). */
export const SILENCE_MS = 15_000
/** How often each side pings: three chances within SILENCE_MS. */
export const PING_MS = 5_000
/** An open not answered within this long fails. */
export const OPEN_TIMEOUT_MS = 10_000

/** What the mux sends on: one call, one WebSocket binary message. Returns false when the message was dropped. */
export interface FrameTransport {
  send(frame: Uint8Array): boolean
  close(code: number, reason: string): void
}

export class TunnelClosed extends Error {}
/** The agent refused to open a stream (its API server refused the connection, too many streams…). */
export class OpenRefused extends Error {}

/** What a stream's owner hears. Each is called at most once but `data` and `writable`. */
export interface StreamEvents {
  /** Bytes arrived: call `consumed(n)` once they are taken (written on) to let the peer send more. */
  data(bytes: Uint8Array): void
  /** The peer will send nothing more. */
  end(): void
  /** The stream is gone (reset, tunnel lost, or both halves ended); `reason` when it was not a clean end. */
  close(reason?: string): void
  /** The window reopened: what `write` did not take may be written now. */
  writable(): void
}

const QUIET: StreamEvents = { data() {}, end() {}, close() {}, writable() {} }

export class TunnelStream {
  events: StreamEvents = QUIET
  /** Bytes the peer still lets us send. */
  private sendWindow = WINDOW_BYTES
  /** Bytes we still let the peer send. */
  private receiveWindow = WINDOW_BYTES
  /** Bytes consumed but not yet credited. */
  private uncredited = 0
  /** Bytes handed to the consumer and not yet consumed. */
  private unconsumed = 0
  private sentFin = false
  private receivedFin = false
  closed = false

  constructor(
    private readonly tunnel: Tunnel,
    readonly id: number,
  ) {}

  /**
   * Sends what the window allows of `bytes` and returns how many bytes it took; the rest waits for
   * `writable`. Nothing is taken after end or close.
   */
  write(bytes: Uint8Array): number {
    if (this.closed || this.sentFin) return 0
    let taken = 0
    while (taken < bytes.byteLength && this.sendWindow > 0) {
      const size = Math.min(bytes.byteLength - taken, this.sendWindow, MAX_DATA_BYTES)
      this.tunnel.send(encode(Frame.data, this.id, bytes.subarray(taken, taken + size)))
      this.sendWindow -= size
      taken += size
    }
    return taken
  }

  /** `n` received bytes were taken by the consumer: the peer may send as many more. */
  consumed(n: number): void {
    // More than was handed over would let the peer send beyond the window (which it must not).
    const taken = Math.min(n, this.unconsumed)
    if (this.closed || taken <= 0) return
    this.unconsumed -= taken
    this.uncredited += taken
    if (this.uncredited >= CREDIT_BATCH_BYTES || this.receiveWindow === 0) {
      this.tunnel.send(encodeCredit(this.id, this.uncredited))
      this.receiveWindow += this.uncredited
      this.uncredited = 0
    }
  }

  /** Half-closes: we send nothing more. */
  end(): void {
    if (this.closed || this.sentFin) return
    this.sentFin = true
    this.tunnel.send(encode(Frame.fin, this.id))
    if (this.receivedFin) this.finish()
  }

  /** Aborts the stream both ways. */
  reset(reason: string): void {
    if (this.closed) return
    this.tunnel.send(encodeText(Frame.reset, this.id, reason))
    this.finish(reason)
  }

  /** A frame of this stream from the peer; returns a protocol error's description, or undefined. */
  receive(frame: DecodedFrame): string | undefined {
    switch (frame.type) {
      case Frame.data: {
        if (this.receivedFin) return 'data after fin'
        if (frame.payload.byteLength > this.receiveWindow) return 'data beyond the window'
        this.receiveWindow -= frame.payload.byteLength
        this.unconsumed += frame.payload.byteLength
        if (frame.payload.byteLength > 0) this.events.data(frame.payload)
        return undefined
      }
      case Frame.credit: {
        const credit = creditOf(frame.payload)
        // The receiver credits only bytes its consumer took: the window can never exceed its size.
        if (credit === undefined || this.sendWindow + credit > WINDOW_BYTES) return 'bad credit'
        const reopened = this.sendWindow === 0 && credit > 0
        this.sendWindow += credit
        if (reopened) this.events.writable()
        return undefined
      }
      case Frame.fin: {
        if (this.receivedFin) return 'second fin'
        this.receivedFin = true
        this.events.end()
        if (this.sentFin) this.finish()
        return undefined
      }
      case Frame.reset:
        this.finish(reasonOf(frame.payload) || 'reset by the peer')
        return undefined
      default:
        return `frame type ${frame.type} on a stream`
    }
  }

  /** Forgets the stream and tells its owner. */
  finish(reason?: string): void {
    if (this.closed) return
    this.closed = true
    this.tunnel.forget(this.id)
    this.events.close(reason)
  }
}

interface PendingOpen {
  stream: TunnelStream
  deadline: number
  resolve(stream: TunnelStream): void
  reject(error: Error): void
}

export interface TunnelOptions {
  role: 'platform' | 'agent'
  now: () => number
  /** agent: a stream the platform opened; answer with `accept` or `refuse`. */
  incoming?(stream: TunnelStream, accept: () => void, refuse: (reason: string) => void): void
  /** The tunnel is gone (either side closed it, a protocol error, silence). Called once. */
  closed?(reason: string): void
}

export class Tunnel {
  private readonly streams = new Map<number, TunnelStream>()
  private readonly pending = new Map<number, PendingOpen>()
  private nextId = 1
  private lastHeard: number
  private lastPing: number
  closedReason: string | undefined

  constructor(
    private readonly transport: FrameTransport,
    private readonly options: TunnelOptions,
  ) {
    this.lastHeard = this.lastPing = options.now()
  }

  get streamCount(): number {
    return this.streams.size
  }

  /** platform: opens a stream to the agent's API server. Rejects with OpenRefused, or TunnelClosed. */
  open(): Promise<TunnelStream> {
    if (this.closedReason !== undefined) return Promise.reject(new TunnelClosed(this.closedReason))
    if (this.streams.size >= MAX_STREAMS) return Promise.reject(new OpenRefused(`more than ${MAX_STREAMS} streams open`))
    const stream = new TunnelStream(this, this.nextId++)
    this.streams.set(stream.id, stream)
    return new Promise((resolve, reject) => {
      this.pending.set(stream.id, { stream, deadline: this.options.now() + OPEN_TIMEOUT_MS, resolve, reject })
      this.send(encode(Frame.open, stream.id))
    })
  }

  /** One message from the peer. Never throws: what breaks the protocol closes the tunnel. */
  receive(message: Uint8Array): void {
    if (this.closedReason !== undefined) return
    this.lastHeard = this.options.now()
    const frame = decode(message)
    if (!frame) return this.close('malformed frame', 1002)
    const problem = frame.stream === 0 ? this.receiveControl(frame) : this.receiveStream(frame)
    if (problem) this.close(`protocol error: ${problem}`, 1002)
  }

  /** Pings when due, closes a silent tunnel, fails opens past their deadline. */
  tick(now: number): void {
    if (this.closedReason !== undefined) return
    if (now - this.lastHeard > SILENCE_MS) return this.close(`nothing heard for ${SILENCE_MS / 1000} s`, 1001)
    if (now - this.lastPing >= PING_MS) {
      this.lastPing = now
      this.send(encode(Frame.ping, 0))
    }
    for (const [id, open] of this.pending)
      if (now >= open.deadline) {
        this.pending.delete(id)
        open.stream.reset('open timed out')
        open.reject(new OpenRefused('the agent did not answer the open in time'))
      }
  }

  /** Closes the tunnel and every stream on it. */
  close(reason: string, code = 1000): void {
    if (this.closedReason !== undefined) return
    this.closedReason = reason
    for (const open of this.pending.values()) open.reject(new TunnelClosed(reason))
    this.pending.clear()
    for (const stream of [...this.streams.values()]) stream.finish(`tunnel closed: ${reason}`)
    this.transport.close(code, reason.slice(0, 120))
    this.options.closed?.(reason)
  }

  send(frame: Uint8Array): void {
    if (this.closedReason !== undefined) return
    // A dropped message would corrupt a stream: the tunnel cannot go on.
    if (!this.transport.send(frame)) this.close('the connection dropped a frame', 1011)
  }

  forget(id: number): void {
    this.streams.delete(id)
  }

  private receiveControl(frame: DecodedFrame): string | undefined {
    if (frame.type === Frame.ping) {
      if (frame.payload.byteLength > 16) return 'ping payload too large'
      this.send(encode(Frame.pong, 0, frame.payload))
      return undefined
    }
    if (frame.type === Frame.pong) return undefined
    return `frame type ${frame.type} on stream 0`
  }

  private receiveStream(frame: DecodedFrame): string | undefined {
    if (frame.type === Frame.open) return this.receiveOpen(frame.stream)
    if (frame.type === Frame.openOk || frame.type === Frame.openRefused) {
      if (this.options.role !== 'platform') return 'open answer sent to the agent'
      const open = this.pending.get(frame.stream)
      // An answer to an open that timed out (or never was) is late, not hostile: ignored.
      if (!open) return undefined
      this.pending.delete(frame.stream)
      if (frame.type === Frame.openOk) open.resolve(open.stream)
      else {
        open.stream.finish('refused')
        open.reject(new OpenRefused(reasonOf(frame.payload) || 'the agent refused the stream'))
      }
      return undefined
    }
    const stream = this.streams.get(frame.stream)
    // Frames of a stream already closed here may still be on their way: dropped.
    if (!stream || this.pending.has(frame.stream)) return stream ? 'frame before the open was answered' : undefined
    return stream.receive(frame)
  }

  private receiveOpen(id: number): string | undefined {
    if (this.options.role !== 'agent' || !this.options.incoming) return 'only the platform opens streams'
    if (id < this.nextId) return 'stream ids must grow'
    this.nextId = id + 1
    if (this.streams.size >= MAX_STREAMS) {
      this.send(encodeText(Frame.openRefused, id, `more than ${MAX_STREAMS} streams open`))
      return undefined
    }
    const stream = new TunnelStream(this, id)
    this.streams.set(id, stream)
    let answered = false
    this.options.incoming(
      stream,
      () => {
        if (answered || stream.closed) return
        answered = true
        this.send(encode(Frame.openOk, id))
      },
      (reason) => {
        if (answered || stream.closed) return
        answered = true
        this.send(encodeText(Frame.openRefused, id, reason))
        stream.finish(reason)
      },
    )
    return undefined
  }
}
