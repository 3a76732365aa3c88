import type { Socket, SocketHandler } from 'bun'
import { AppError } from '../errors'
import { credentialsOf, networkFailure } from './client'
import type { ClusterConnection } from './connection'

/**
 * A keep-alive HTTP/1.1 client for finite member calls (no watch, no followed log, no upgrade):
 * per request it costs a fraction of Bun's fetch over TLS, which dominated the proxy's CPU.
 * Answers are parsed strictly and a connection whose framing is in any doubt (bytes beyond the
 * answer, a close-delimited body, `Connection: close`, a parse error) is closed rather than reused,
 * so one answer can never be read as part of the next. The member's certificate is checked as
 * memberFetch checks it (the cluster's CA or the system roots, its tlsServerName, no redirects,
 * no decompression: the bytes come back as the member sent them).
 */

/** Connections kept per cluster; further requests wait for one to come free. */
export const MAX_CONNECTIONS_PER_CLUSTER = 32
/** An idle connection is closed after this long: well before the usual server idle timeouts (Bun 10 s, Go 90 s, nginx 75 s). */
export const IDLE_CLOSE_MS = 4_000
/** A response head (status line and headers) larger than this is refused. */
export const MAX_HEAD_BYTES = 64 * 1024
/** A body larger than this is refused: the answer is buffered whole. */
export const MAX_BODY_BYTES = 512 * 1024 * 1024
/** Bodies up to this declared length get their buffer at once. */
const PREALLOCATE_BYTES = 1024 * 1024
/** How often deadlines, idle connections and calls whose client left are checked. */
const SWEEP_MS = 250

export interface FiniteRequest {
  method: string
  /** Path below the server URL, starting with `/`, percent-encoded (and query). */
  path: string
  headers: Record<string, string>
  body: Uint8Array | null
  timeoutMs: number
  /**
   * The client's request: once it has gone away the call ends at the next sweep (an abort listener
   * per request cost a tenth of the relay's CPU) and its connection is closed.
   */
  signal?: AbortSignal
}

export interface FiniteAnswer {
  status: number
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Uint8Array<ArrayBuffer>
}

export const KeepAliveMessages = {
  malformed: (cluster: string, why: string) => `cluster "${cluster}" answered with a malformed HTTP response (${why})`,
  badRequestHeader: 'a header for the member carries a line break or control character',
  clientGone: (cluster: string) => `the client went away before cluster "${cluster}" answered`,
} as const

class Malformed extends Error {}

/** Bytes not allowed in a request line or header value we write (CR, LF, NUL and other controls but tab). */
const UNSAFE_REQUEST_TEXT = /[\u0000-\u0008\u000a-\u001f\u007f]/
const UNSAFE_PATH = /[\u0000-\u0020\u007f]/
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\u0000-\u0008\u000a-\u001f\u007f]*)?$/

/** `text` from `start` to `end`, without the spaces and tabs around the value. */
function trimSpaces(text: string, start: number, end: number): string {
  while (start < end && (text.charCodeAt(start) === 32 || text.charCodeAt(start) === 9)) start++
  while (end > start && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--
  return text.slice(start, end)
}

/**
 * Lines end in CRLF only (a bare CR or LF is how two parsers come to disagree), and no other
 * control character but tab appears (obs-fold lines start with a space and fail as header lines).
 * Throws Malformed.
 */
function checkHeadText(text: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 32 && c !== 127) continue
    if (c === 9) continue
    if (c === 13 && text.charCodeAt(i + 1) === 10) {
      i++
      continue
    }
    throw new Malformed(c === 13 || c === 10 ? 'bare CR or LF in the head' : 'control character in the head')
  }
}

type BodyMode = { kind: 'none' } | { kind: 'length'; remaining: number } | { kind: 'chunked' } | { kind: 'close' }

/** Reads one answer from the bytes of a connection, incrementally. */
export class AnswerParser {
  private head: Buffer | undefined
  private status = 0
  private headers: Record<string, string> = Object.create(null) as Record<string, string>
  private mode: BodyMode | undefined
  private pieces: Uint8Array<ArrayBuffer>[] = []
  private size = 0
  private fixed: Uint8Array<ArrayBuffer> | undefined
  private chunk: { state: 'size' | 'data' | 'data-end' | 'trailers'; remaining: number; line: Buffer | undefined } = {
    state: 'size',
    remaining: 0,
    line: undefined,
  }
  private trailerBytes = 0
  /** The answer asks for the connection to be closed (or is HTTP/1.0, or close-delimited). */
  closeAfter = false
  done = false

  constructor(private readonly headRequest: boolean) {}

  /** Feeds bytes; returns the bytes after the end of the answer (empty when none). Throws Malformed. */
  feed(data: Buffer): Buffer {
    let rest = data
    while (rest.length > 0 && !this.done) {
      if (!this.mode) rest = this.readHead(rest)
      else if (this.mode.kind === 'length') rest = this.readFixed(rest, this.mode)
      else if (this.mode.kind === 'chunked') rest = this.readChunked(rest)
      else if (this.mode.kind === 'close') {
        this.append(rest)
        rest = EMPTY
      }
    }
    return rest
  }

  /** The connection closed: a close-delimited body ends here; anything else is cut short. Throws Malformed. */
  end(): void {
    if (this.done) return
    if (this.mode?.kind === 'close') {
      this.finish()
      return
    }
    throw new Malformed('the connection closed before the answer was complete')
  }

  /** Whether any byte of the answer arrived (a connection closing before that may be retried). */
  get started(): boolean {
    return this.head !== undefined || this.mode !== undefined
  }

  answer(): FiniteAnswer {
    const body = this.fixed ?? (this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.size))
    return { status: this.status, headers: this.headers, body }
  }

  private readHead(data: Buffer): Buffer {
    const buffered = this.head ? Buffer.concat([this.head, data]) : data
    // Search from just before the new bytes: the terminator may straddle two reads.
    const from = this.head ? Math.max(0, this.head.length - 3) : 0
    const end = buffered.indexOf('\r\n\r\n', from, 'latin1')
    if (end < 0) {
      if (buffered.length > MAX_HEAD_BYTES) throw new Malformed(`response head larger than ${MAX_HEAD_BYTES} bytes`)
      // Copied: the socket may reuse its read buffer after this callback.
      this.head = buffered === data ? Buffer.from(data) : buffered
      return EMPTY
    }
    if (end + 4 > MAX_HEAD_BYTES) throw new Malformed(`response head larger than ${MAX_HEAD_BYTES} bytes`)
    this.head = undefined
    const informational = this.parseHead(buffered.toString('latin1', 0, end))
    const rest = buffered.subarray(end + 4)
    if (informational) {
      // 100 Continue, 102, 103: a final answer follows on the same connection.
      this.headers = Object.create(null) as Record<string, string>
      this.head = Buffer.alloc(0)
      return rest
    }
    if (this.mode!.kind === 'none') this.finish()
    else if (this.mode!.kind === 'length' && this.mode!.remaining === 0) this.finish()
    return rest
  }

  /** Parses the status line and headers and decides the body's framing; true for a 1xx to skip. Throws Malformed. */
  private parseHead(text: string): boolean {
    checkHeadText(text)
    const lower = text.toLowerCase()
    let lineEnd = text.indexOf('\r\n')
    if (lineEnd < 0) lineEnd = text.length
    const status = STATUS_LINE.exec(text.slice(0, lineEnd))
    if (!status) throw new Malformed('bad status line')
    const minor = status[1]
    this.status = Number(status[2])
    const lengths: string[] = []
    const encodings: string[] = []
    let connection = ''
    for (let start = lineEnd + 2; start < text.length; start = lineEnd + 2) {
      lineEnd = text.indexOf('\r\n', start)
      if (lineEnd < 0) lineEnd = text.length
      const colon = text.indexOf(':', start)
      if (colon <= start || colon > lineEnd) throw new Malformed('bad header line')
      // Names compared and kept in lower case (latin1 lowers one character to one); values as sent.
      const name = lower.slice(start, colon)
      if (!TOKEN.test(name)) throw new Malformed('bad header name')
      const value = trimSpaces(text, colon + 1, lineEnd)
      if (name === 'content-length') lengths.push(value)
      else if (name === 'transfer-encoding') encodings.push(value)
      else if (name === 'connection') connection += `,${value.toLowerCase()}`
      const previous = this.headers[name]
      this.headers[name] = previous === undefined ? value : `${previous}, ${value}`
    }
    if (this.status === 101) throw new Malformed('101 Switching Protocols on a plain request')
    if (this.status < 200) return true
    this.closeAfter = minor === '0' || connection.split(',').some((token) => token.trim() === 'close')
    if (encodings.length > 0 && lengths.length > 0) throw new Malformed('both Transfer-Encoding and Content-Length')
    if (encodings.length > 1 || (encodings.length === 1 && encodings[0]!.toLowerCase() !== 'chunked'))
      throw new Malformed('a Transfer-Encoding other than chunked')
    if (lengths.length > 1) throw new Malformed('more than one Content-Length')
    if (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0]!)) throw new Malformed('bad Content-Length')
    if (this.headRequest || this.status === 204 || this.status === 304) this.mode = { kind: 'none' }
    else if (encodings.length === 1) {
      if (minor === '0') throw new Malformed('chunked in HTTP/1.0')
      this.mode = { kind: 'chunked' }
    } else if (lengths.length === 1) {
      const length = Number(lengths[0])
      if (length > MAX_BODY_BYTES) throw new Malformed(`body larger than ${MAX_BODY_BYTES} bytes`)
      this.mode = { kind: 'length', remaining: length }
      // A small body is copied into place once; a large one grows as it arrives, so a declared
      // length alone (a hostile member's) reserves no memory.
      if (length <= PREALLOCATE_BYTES) this.fixed = new Uint8Array(length)
    } else {
      this.mode = { kind: 'close' }
      this.closeAfter = true
    }
    return false
  }

  private readFixed(data: Buffer, mode: { remaining: number }): Buffer {
    const take = Math.min(mode.remaining, data.length)
    const piece = take === data.length ? data : data.subarray(0, take)
    if (this.fixed) this.fixed.set(piece, this.fixed.length - mode.remaining)
    else this.append(piece)
    mode.remaining -= take
    if (mode.remaining === 0) this.finish()
    return data.subarray(take)
  }

  private readChunked(data: Buffer): Buffer {
    const chunk = this.chunk
    let rest = data
    while (rest.length > 0 && !this.done) {
      if (chunk.state === 'data') {
        const take = Math.min(chunk.remaining, rest.length)
        this.append(rest.subarray(0, take))
        chunk.remaining -= take
        rest = rest.subarray(take)
        if (chunk.remaining === 0) chunk.state = 'data-end'
        continue
      }
      const line = this.takeLine(rest)
      if (!line) return EMPTY
      rest = line.rest
      if (chunk.state === 'data-end') {
        if (line.text !== '') throw new Malformed('chunk data longer than its size')
        chunk.state = 'size'
      } else if (chunk.state === 'size') {
        const size = /^([0-9a-fA-F]{1,8})(?:[ \t]*;[^\u0000-\u0008\u000a-\u001f\u007f]*)?$/.exec(line.text)
        if (!size) throw new Malformed('bad chunk size')
        chunk.remaining = Number.parseInt(size[1]!, 16)
        if (this.size + chunk.remaining > MAX_BODY_BYTES) throw new Malformed(`body larger than ${MAX_BODY_BYTES} bytes`)
        chunk.state = chunk.remaining === 0 ? 'trailers' : 'data'
      } else {
        // Trailers are read and dropped; an empty line ends the answer.
        if (line.text === '') this.finish()
        else if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/.test(line.text)) throw new Malformed('bad trailer')
      }
    }
    return rest
  }

  /** One CRLF-terminated line of the chunked framing (kept across reads); undefined until it is complete. */
  private takeLine(data: Buffer): { text: string; rest: Buffer } | undefined {
    const buffered = this.chunk.line ? Buffer.concat([this.chunk.line, data]) : data
    const end = buffered.indexOf('\r\n', 0, 'latin1')
    const limit = this.chunk.state === 'trailers' ? MAX_HEAD_BYTES - this.trailerBytes : 1024
    if (end < 0) {
      if (buffered.length > limit) throw new Malformed('chunk framing line too long')
      this.chunk.line = buffered === data ? Buffer.from(data) : buffered
      return undefined
    }
    if (end > limit) throw new Malformed('chunk framing line too long')
    this.chunk.line = undefined
    const text = buffered.toString('latin1', 0, end)
    if (text.includes('\r') || text.includes('\n')) throw new Malformed('bare CR or LF in the chunk framing')
    if (this.chunk.state === 'trailers') this.trailerBytes += end + 2
    return { text, rest: buffered.subarray(end + 2) }
  }

  private append(data: Buffer): void {
    this.size += data.length
    if (this.size > MAX_BODY_BYTES) throw new Malformed(`body larger than ${MAX_BODY_BYTES} bytes`)
    this.pieces.push(new Uint8Array(data))
  }

  private finish(): void {
    this.done = true
  }
}

const EMPTY = Buffer.alloc(0)

const clientGone = (cluster: string) => new AppError('clientClosed', KeepAliveMessages.clientGone(cluster))
const resetError = () => Object.assign(new Error('closed'), { code: 'ECONNRESET' })
const timedOut = () => Object.assign(new Error('timeout'), { name: 'TimeoutError' })

/** One request in flight on a connection. */
interface Exchange {
  clusterName: string
  parser: AnswerParser
  deadline: number
  /** The client's request; the sweep ends the exchange once it has aborted. */
  signal: AbortSignal | undefined
  resolve(answer: FiniteAnswer): void
  reject(error: unknown): void
  /** Bytes of the request not yet taken by the socket (back-pressure). */
  unsent: Uint8Array | undefined
  /** Whether it may be sent again on a new connection when a reused one closes before any answer. */
  retryable: boolean
  retry(): void
}

/** One connection to a member and what it is doing. */
interface Conn {
  pool: Pool
  socket: Socket<Conn> | undefined
  /** Until the connection (and its TLS handshake) is up: settles the wait for it. */
  connecting: { deadline: number; settle(error?: unknown): void } | undefined
  exchange: Exchange | undefined
  idleSince: number
  /** Served a request before: a close before any answer may be the server's idle timeout. */
  reused: boolean
  /** The socket error that ended the connection, for the message. */
  failure: unknown
  closed: boolean
}

const malformed = (exchange: Exchange, error: unknown) =>
  error instanceof Malformed ? new AppError('upstream', KeepAliveMessages.malformed(exchange.clusterName, error.message)) : error

const handlers: SocketHandler<Conn> = {
  data(socket, data) {
    const conn = socket.data
    const exchange = conn.exchange
    // Bytes nobody asked for: the framing of what came before is in doubt.
    if (!exchange) return closeConn(conn)
    let rest: Buffer
    try {
      rest = exchange.parser.feed(data as Buffer)
    } catch (error) {
      return failExchange(conn, malformed(exchange, error))
    }
    if (!exchange.parser.done) return
    conn.exchange = undefined
    // Reused only when the answer ended exactly where its framing said and the request went out whole.
    const reusable = rest.length === 0 && !exchange.parser.closeAfter && !exchange.unsent
    exchange.resolve(exchange.parser.answer())
    if (reusable) release(conn)
    else closeConn(conn)
  },
  drain(socket) {
    const exchange = socket.data.exchange
    if (exchange?.unsent) exchange.unsent = write(socket, exchange.unsent)
  },
  close(socket, error) {
    if (error && socket.data.failure === undefined) socket.data.failure = error
    connClosed(socket.data)
  },
  error(socket, error) {
    socket.data.failure = error
    socket.terminate()
    connClosed(socket.data)
  },
  // The server half-closed: a close-delimited body ends here; an idle connection goes.
  end(socket) {
    socket.end()
    connClosed(socket.data)
  },
}

/** Writes what the socket takes; the rest waits for drain. */
function write(socket: Socket<Conn>, bytes: Uint8Array): Uint8Array | undefined {
  const written = socket.write(bytes)
  if (written >= bytes.length) return undefined
  return bytes.subarray(Math.max(0, written))
}

/** The connection is gone: its request (if any) is answered, retried, or failed. */
function connClosed(conn: Conn): void {
  if (conn.closed) return
  conn.closed = true
  conn.connecting?.settle(conn.failure ?? resetError())
  conn.pool.forget(conn)
  const exchange = conn.exchange
  if (!exchange) return
  conn.exchange = undefined
  if (conn.reused && exchange.retryable && !exchange.parser.started) return exchange.retry()
  if (conn.failure !== undefined || !exchange.parser.started)
    return exchange.reject(networkFailure(exchange.clusterName, conn.failure ?? resetError()))
  try {
    exchange.parser.end()
    exchange.resolve(exchange.parser.answer())
  } catch (error) {
    exchange.reject(malformed(exchange, error))
  }
}

/** Closes the connection; a request on it fails with `error` (or as cut short). */
function failExchange(conn: Conn, error: unknown): void {
  const exchange = conn.exchange
  conn.exchange = undefined
  conn.socket?.terminate()
  connClosed(conn)
  exchange?.reject(error)
}

function closeConn(conn: Conn): void {
  conn.socket?.terminate()
  connClosed(conn)
}

function release(conn: Conn): void {
  conn.reused = true
  conn.idleSince = performance.now()
  conn.pool.idleConn(conn)
}

/** Pools with connections, checked by the sweep. */
const live = new Set<Pool>()
const pools = new Map<ClusterConnection, Pool>()
let sweeper: Timer | undefined

/** The connections of one cluster connection (one kubeconfig, one credential). */
class Pool {
  private readonly idle: Conn[] = []
  private readonly all = new Set<Conn>()
  private readonly waiting: ((conn: Conn | undefined) => void)[] = []
  private readonly host: string
  private readonly port: number
  private readonly hostHeader: string
  private readonly basePath: string
  private readonly tls: ReturnType<typeof credentialsOf>['tls'] | undefined
  private readonly authorization: string | undefined

  constructor(readonly connection: ClusterConnection) {
    const url = new URL(connection.server)
    const secure = url.protocol === 'https:'
    this.host = url.hostname.replace(/^\[|\]$/g, '')
    this.port = url.port ? Number(url.port) : secure ? 443 : 80
    this.hostHeader = url.host
    this.basePath = url.pathname === '/' ? '' : url.pathname
    const { authorization, tls } = credentialsOf(connection)
    this.authorization = authorization
    this.tls = secure ? tls : undefined
  }

  /** The request's bytes: request line, Host, the caller's headers, the credential, the length. Throws invalid. */
  encode(request: FiniteRequest): Uint8Array {
    if (!TOKEN.test(request.method) || UNSAFE_PATH.test(request.path) || !request.path.startsWith('/'))
      throw new AppError('invalid', KeepAliveMessages.badRequestHeader)
    let head = `${request.method} ${this.basePath}${request.path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`
    for (const name in request.headers) {
      const value = request.headers[name]!
      if (!TOKEN.test(name) || UNSAFE_REQUEST_TEXT.test(value)) throw new AppError('invalid', KeepAliveMessages.badRequestHeader)
      const lower = name.toLowerCase()
      if (
        lower === 'host' ||
        lower === 'content-length' ||
        lower === 'transfer-encoding' ||
        lower === 'connection' ||
        lower === 'authorization'
      )
        continue
      head += `${name}: ${value}\r\n`
    }
    if (this.authorization) {
      if (UNSAFE_REQUEST_TEXT.test(this.authorization)) throw new AppError('invalid', KeepAliveMessages.badRequestHeader)
      head += `authorization: ${this.authorization}\r\n`
    }
    if (request.body) head += `content-length: ${request.body.length}\r\n`
    else if (request.method !== 'GET' && request.method !== 'HEAD') head += 'content-length: 0\r\n'
    head += '\r\n'
    const headBytes = Buffer.from(head, 'latin1')
    return request.body && request.body.length > 0 ? Buffer.concat([headBytes, request.body]) : headBytes
  }

  /** An idle connection, a new one, or (at the cap) the next one to come free. Throws upstream. */
  async acquire(clusterName: string, deadline: number, fresh: boolean): Promise<Conn> {
    while (!fresh && this.idle.length > 0) {
      const conn = this.idle.pop()!
      if (!conn.closed) return conn
    }
    if (this.all.size < MAX_CONNECTIONS_PER_CLUSTER) return this.open(clusterName, deadline)
    const conn = await new Promise<Conn | undefined>((resolve) => this.waiting.push(resolve))
    if (conn) return conn
    if (performance.now() >= deadline) throw networkFailure(clusterName, timedOut())
    return this.acquire(clusterName, deadline, fresh)
  }

  private async open(clusterName: string, deadline: number): Promise<Conn> {
    const conn: Conn = {
      pool: this,
      socket: undefined,
      connecting: undefined,
      exchange: undefined,
      idleSince: 0,
      reused: false,
      failure: undefined,
      closed: false,
    }
    this.all.add(conn)
    live.add(this)
    if (!pools.has(this.connection)) pools.set(this.connection, this)
    startSweeper()
    const ready = new Promise<void>((resolve, reject) => {
      conn.connecting = {
        deadline,
        settle: (error) => {
          conn.connecting = undefined
          if (error === undefined) resolve()
          else reject(error)
        },
      }
    })
    Bun.connect<Conn>({
      hostname: this.host,
      port: this.port,
      data: conn,
      ...(this.tls ? { tls: this.tls } : {}),
      socket: {
        ...handlers,
        ...(this.tls ? {} : { open: () => conn.connecting?.settle() }),
        // Bytes written before the handshake completes are lost: requests wait for it.
        handshake: (_socket, success, authorizationError) => {
          if (!success || (authorizationError && this.tls?.rejectUnauthorized !== false))
            conn.failure = authorizationError ?? new Error('TLS handshake failed')
          else conn.connecting?.settle()
        },
        connectError: (_socket, error) => {
          conn.failure = error
          connClosed(conn)
        },
      },
    }).then(
      (socket) => {
        conn.socket = socket
        if (conn.closed) socket.terminate()
      },
      (error: unknown) => {
        if (conn.failure === undefined) conn.failure = error
        connClosed(conn)
      },
    )
    try {
      await ready
    } catch (error) {
      conn.socket?.terminate()
      connClosed(conn)
      throw networkFailure(clusterName, error)
    }
    return conn
  }

  idleConn(conn: Conn): void {
    const waiter = this.waiting.shift()
    if (waiter) waiter(conn)
    else this.idle.push(conn)
  }

  forget(conn: Conn): void {
    if (!this.all.delete(conn)) return
    const at = this.idle.indexOf(conn)
    if (at >= 0) this.idle.splice(at, 1)
    // A slot came free: the next waiter opens a connection of its own.
    this.waiting.shift()?.(undefined)
    if (this.all.size === 0 && this.waiting.length === 0) {
      live.delete(this)
      if (pools.get(this.connection) === this) pools.delete(this.connection)
    }
  }

  /** Fails connects and requests past their deadline and closes connections idle too long. */
  sweep(now: number): void {
    for (const conn of [...this.all]) {
      if (conn.connecting && now >= conn.connecting.deadline) {
        conn.failure = timedOut()
        closeConn(conn)
      } else if (conn.exchange && now >= conn.exchange.deadline) failExchange(conn, networkFailure(conn.exchange.clusterName, timedOut()))
      else if (conn.exchange?.signal?.aborted) failExchange(conn, clientGone(conn.exchange.clusterName))
      else if (!conn.exchange && !conn.connecting && now - conn.idleSince >= IDLE_CLOSE_MS && this.idle.includes(conn)) closeConn(conn)
    }
  }
}

function startSweeper(): void {
  if (sweeper) return
  sweeper = setInterval(() => {
    const now = performance.now()
    for (const pool of [...live]) pool.sweep(now)
    if (live.size === 0) {
      clearInterval(sweeper)
      sweeper = undefined
    }
  }, SWEEP_MS)
  sweeper.unref()
}

/**
 * Sends one finite request to the member over a kept-alive connection and resolves with the
 * whole answer. Redirects are answers like any other (never followed); bodies are not
 * decompressed. The call ends at its deadline, or within a sweep (250 ms) of `signal` aborting (the
 * client went away: its connection is closed, as the answer can no longer be read to its end; a
 * request still waiting for a connection is never sent). Throws upstream
 * (unreachable, TLS refused, timeout, malformed answer), invalid (a header or path that cannot be
 * written safely) and clientClosed.
 */
export function finiteRequest(clusterName: string, connection: ClusterConnection, request: FiniteRequest): Promise<FiniteAnswer> {
  const pool = pools.get(connection) ?? new Pool(connection)
  let bytes: Uint8Array
  try {
    bytes = pool.encode(request)
  } catch (error) {
    return Promise.reject(error)
  }
  const { signal } = request
  if (signal?.aborted) return Promise.reject(clientGone(clusterName))
  const deadline = performance.now() + request.timeoutMs
  // A reused connection may have been closed by the server just now: GET and HEAD go again on a new one.
  const retryable = request.method === 'GET' || request.method === 'HEAD'
  const attempt = (fresh: boolean): Promise<FiniteAnswer> =>
    new Promise<FiniteAnswer>((resolve, reject) => {
      pool.acquire(clusterName, deadline, fresh).then((conn) => {
        if (conn.closed) return resolve(attempt(true))
        // The client left while this waited for a connection: the connection serves someone else.
        if (signal?.aborted) {
          release(conn)
          return reject(clientGone(clusterName))
        }
        conn.exchange = {
          clusterName,
          parser: new AnswerParser(request.method === 'HEAD'),
          deadline,
          signal,
          resolve,
          reject,
          unsent: undefined,
          retryable: retryable && !fresh,
          retry: () => resolve(attempt(true)),
        }
        conn.exchange.unsent = write(conn.socket!, bytes)
      }, reject)
    })
  return attempt(false)
}
