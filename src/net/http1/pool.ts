import type { Socket, SocketHandler } from 'bun'
import { type Answer, AnswerCollector, type AnswerTaking, type ByteBudget, type Flow, type StreamedAnswer } from './answer'
import { AnswerParser } from './parser'
import { type Dialed, encodeRequest, type Origin, type PoolRequest } from './request'

/**
 * A keep-alive HTTP/1.1 client for finite calls, and for streams (a watch, a followed log) on
 * connections of their own (no upgrade): per request it costs a fraction of Bun's fetch over TLS,
 * and a header with several values goes as several lines, which fetch would join into one. A connection whose framing is in any doubt
 * (bytes beyond the answer, a close-delimited body, `Connection: close`, a parse error) is closed
 * rather than reused, so one answer can never be read as part of the next. No redirect is
 * followed and nothing is decompressed: the bytes come back as the server sent them.
 *
 * Answers are kept whole or streamed as answer.ts decides, within the byte budget the pools share.
 *
 * Failures are the socket's own errors (with their `code`), a TimeoutError, Malformed (parser.ts),
 * AnswerTooLarge or BudgetExhausted (answer.ts), ClientGone, or UnsafeRequest (request.ts); the
 * owner turns them into its own words.
 */

/** Connections kept per origin; further requests wait for one to come free. */
export const MAX_CONNECTIONS_PER_ORIGIN = 32
/**
 * Connections of one origin a single caller may hold at once; its further calls wait for one of its
 * own to finish. However slow one caller's calls, the other half stays for everyone else.
 */
export const CALLER_SHARE = MAX_CONNECTIONS_PER_ORIGIN / 2
/** An idle connection is closed after this long: well before the usual server idle timeouts (Bun 10 s, Go 90 s, nginx 75 s). */
export const IDLE_CLOSE_MS = 4_000
/** How often deadlines, idle connections and calls whose client left are checked. */
const SWEEP_MS = 250

/** The caller's request was aborted (its client went away) before the answer came. */
export class ClientGone extends Error {}

const resetError = () => Object.assign(new Error('closed'), { code: 'ECONNRESET' })
export const timedOut = () => Object.assign(new Error('timeout'), { name: 'TimeoutError' })

/** One request in flight on a connection. */
interface Exchange {
  answer: AnswerCollector
  parser: AnswerParser
  /** When the call fails: its deadline; once its answer streams, its member's silence while its consumer waits. */
  deadline: number
  /** The client's request; the sweep ends the exchange once it has aborted. */
  signal: AbortSignal | undefined
  /** Bytes of the request not yet taken by the socket (back-pressure). */
  unsent: Uint8Array | undefined
  /** Whether it may be sent again on a new connection when a reused one closes before any answer. */
  retryable: boolean
  retry(): void
}

/** One connection and what it is doing. */
interface Conn {
  pool: Pool<unknown>
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
  /** The caller whose call holds the connection (opening it or in an exchange); undefined while idle. */
  caller: string | undefined
  /** A stream's own connection (Pool.stream): outside the cap and the shares, closed when its answer ends. */
  dedicated: boolean
}

/** A request waiting for a connection, on behalf of `caller`; resolved with one claimed for it, or undefined to try again. */
interface Waiter {
  caller: string
  resolve(conn: Conn | undefined): void
}

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
      return failExchange(conn, error)
    }
    if (!exchange.parser.done) return
    conn.exchange = undefined
    // Reused only when the answer ended exactly where its framing said and the request went out whole.
    const reusable = rest.length === 0 && !exchange.parser.closeAfter && !exchange.unsent
    exchange.answer.complete()
    if (exchange.answer.streaming) socket.resume()
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
    socket.data.failure ??= error
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
  if (conn.failure !== undefined || !exchange.parser.started) return exchange.answer.fail(conn.failure ?? resetError())
  try {
    exchange.parser.end()
  } catch (error) {
    return exchange.answer.fail(error)
  }
  exchange.answer.complete()
}

/** Closes the connection; a request on it fails with `error` (or as cut short). */
function failExchange(conn: Conn, error: unknown): void {
  const exchange = conn.exchange
  conn.exchange = undefined
  conn.socket?.terminate()
  connClosed(conn)
  exchange?.answer.fail(error)
}

function closeConn(conn: Conn): void {
  conn.socket?.terminate()
  connClosed(conn)
}

function release(conn: Conn): void {
  if (conn.dedicated) return closeConn(conn)
  conn.reused = true
  conn.idleSince = conn.pool.pools.now()
  conn.pool.unclaim(conn)
  conn.pool.idleConn(conn)
}

/**
 * The pools of one app, by key (one origin and credential each), and the sweep that checks them;
 * `close` ends every connection.
 */
export class Pools<K> {
  private readonly byKey = new Map<K, Pool<K>>()
  /** Pools with connections, checked by the sweep. */
  private readonly live = new Set<Pool<K>>()
  private sweeper: Timer | undefined
  closed = false

  constructor(
    readonly now: () => number,
    /** What answers being read may hold in memory, in all and per caller. */
    readonly budget: ByteBudget,
  ) {}

  /** The pool of `key`; a new one (with the origin `describe` gives) is kept once it has a connection. */
  of(key: K, describe: () => Origin): Pool<K> {
    return this.byKey.get(key) ?? new Pool(this, key, describe())
  }

  /** A pool has connections: it is kept under its key and the sweep watches it. */
  watch(pool: Pool<K>): void {
    if (!this.byKey.has(pool.key)) this.byKey.set(pool.key, pool)
    this.live.add(pool)
    if (this.sweeper) return
    this.sweeper = setInterval(() => {
      const now = this.now()
      for (const each of [...this.live]) each.sweep(now)
      if (this.live.size === 0) this.stopSweeping()
    }, SWEEP_MS)
    this.sweeper.unref()
  }

  /** A pool has no connection left and nobody waiting: forgotten until it is needed again. */
  drop(pool: Pool<K>): void {
    this.live.delete(pool)
    if (this.byKey.get(pool.key) === pool) this.byKey.delete(pool.key)
  }

  private stopSweeping(): void {
    clearInterval(this.sweeper)
    this.sweeper = undefined
  }

  /** Closes every connection (their calls fail) and stops the sweep; no connection opens afterwards. */
  close(): void {
    this.closed = true
    for (const pool of [...this.live]) pool.closeAll()
    this.stopSweeping()
  }
}

/** The connections of one origin. */
export class Pool<K = unknown> {
  private readonly idle: Conn[] = []
  private readonly all = new Set<Conn>()
  /** The streams' own connections, not in `all`. */
  private readonly streams = new Set<Conn>()
  private readonly waiting: Waiter[] = []
  /** Connections held per caller (CALLER_SHARE at most). */
  private readonly held = new Map<string, number>()

  constructor(
    readonly pools: Pools<K>,
    readonly key: K,
    readonly origin: Origin,
  ) {}

  /**
   * Sends one request over a kept-alive connection and resolves with the whole answer, or (with `large: 'stream'`) with a streamed one
   * when it is too large to buffer: its body then reads the connection as its consumer takes the bytes, and fails once the member is
   * silent for `timeoutMs` while the consumer waits. The call ends at its deadline, or within a sweep (250 ms) of `signal` aborting (the
   * client went away: its connection is closed, as the answer can no longer be read to its end; a request still waiting for a connection
   * is never sent). A reused connection that closes before any answer (the server's idle timeout) sends a GET or HEAD again on a new one.
   * A caller holds at most CALLER_SHARE connections at once; a connection that comes free goes to the waiting caller that holds the
   * fewest.
   */
  request(request: PoolRequest): Promise<Answer | StreamedAnswer> {
    return this.send(request, request.large ?? 'refuse')
  }

  /**
   * As request, for an answer that need not end (a watch, a followed log): on a new connection outside the cap and the shares (held
   * while its client stays), never sent again nor kept alive; streamed from its head on. The head must come within `timeoutMs`,
   * then the member may stay silent (a quiet watch); `signal` aborting or the consumer cancelling ends it.
   */
  stream(request: Omit<PoolRequest, 'large' | 'caller'>): Promise<StreamedAnswer> {
    return this.send(request, 'always') as Promise<StreamedAnswer>
  }

  private send(request: PoolRequest, taking: AnswerTaking): Promise<Answer | StreamedAnswer> {
    const dedicated = taking === 'always'
    let bytes: Uint8Array
    try {
      bytes = encodeRequest(this.origin, request)
    } catch (error) {
      return Promise.reject(error)
    }
    const { signal } = request
    if (signal?.aborted) return Promise.reject(new ClientGone())
    const deadline = this.pools.now() + request.timeoutMs
    const retryable = !dedicated && (request.method === 'GET' || request.method === 'HEAD')
    const caller = request.caller ?? ''
    const attempt = (fresh: boolean): Promise<Answer | StreamedAnswer> =>
      new Promise<Answer | StreamedAnswer>((resolve, reject) => {
        const acquired = dedicated ? this.open(deadline, caller, true) : this.acquire(deadline, fresh, caller)
        acquired.then((conn) => {
          if (conn.closed) return dedicated ? reject(conn.failure ?? resetError()) : resolve(attempt(true))
          // The client left while this waited for a connection: the connection serves someone else.
          if (signal?.aborted) {
            release(conn)
            return reject(new ClientGone())
          }
          const silenceMs = dedicated ? Number.POSITIVE_INFINITY : request.timeoutMs
          const answer = new AnswerCollector(this.pools.budget, caller, taking, this.flowOf(conn, silenceMs), resolve, reject)
          conn.exchange = {
            answer,
            parser: new AnswerParser(answer, request.method === 'HEAD'),
            deadline,
            signal,
            unsent: undefined,
            retryable: retryable && !fresh,
            retry: () => resolve(attempt(true)),
          }
          conn.exchange.unsent = write(conn.socket!, bytes)
        }, reject)
      })
    return attempt(false)
  }

  /** How a streamed answer on `conn` stops and resumes reading it, times its member's silence, and lets it go when its consumer leaves. */
  private flowOf(conn: Conn, timeoutMs: number): Flow {
    const waitingFrom = () => {
      if (conn.exchange) conn.exchange.deadline = this.pools.now() + timeoutMs
    }
    return {
      pause: () => {
        conn.socket?.pause()
        // The consumer is slow, not the member: no deadline while it has enough.
        if (conn.exchange) conn.exchange.deadline = Number.POSITIVE_INFINITY
      },
      resume: () => {
        conn.socket?.resume()
        waitingFrom()
      },
      progress: waitingFrom,
      cancel: () => {
        if (conn.exchange) failExchange(conn, new ClientGone())
      },
    }
  }

  /**
   * An idle connection, a new one, or (at the pool's cap or the caller's share) the next one to come
   * free for this caller; claimed for `caller` in each case.
   */
  private async acquire(deadline: number, fresh: boolean, caller: string): Promise<Conn> {
    for (;;) {
      if (this.pools.closed) throw resetError()
      if ((this.held.get(caller) ?? 0) < CALLER_SHARE) {
        const conn = fresh ? undefined : this.takeIdle()
        if (conn) return this.claim(conn, caller)
        if (this.all.size < MAX_CONNECTIONS_PER_ORIGIN) return this.open(deadline, caller, false)
      }
      const handed = await new Promise<Conn | undefined>((resolve) => this.waiting.push({ caller, resolve }))
      if (handed) return handed
      if (this.pools.now() >= deadline) throw timedOut()
    }
  }

  /** The most recently used idle connection still fit to use; those idle too long are closed on the way. */
  private takeIdle(): Conn | undefined {
    while (this.idle.length > 0) {
      const conn = this.idle.pop()!
      // Idle too long (the sweep is coarse): the server may be closing it right now.
      if (this.pools.now() - conn.idleSince >= IDLE_CLOSE_MS) closeConn(conn)
      else if (!conn.closed) return conn
    }
    return undefined
  }

  private claim(conn: Conn, caller: string): Conn {
    conn.caller = caller
    this.held.set(caller, (this.held.get(caller) ?? 0) + 1)
    return conn
  }

  /** The connection's call is over: it no longer counts against its caller's share. */
  unclaim(conn: Conn): void {
    const caller = conn.caller
    if (caller === undefined) return
    conn.caller = undefined
    const count = this.held.get(caller)! - 1
    if (count > 0) this.held.set(caller, count)
    else this.held.delete(caller)
  }

  /** The waiter to serve next: among those whose caller is under its share, the one whose caller holds the fewest (the oldest first). */
  private nextWaiter(): Waiter | undefined {
    let best = -1
    let fewest = CALLER_SHARE
    for (let i = 0; i < this.waiting.length; i++) {
      const holding = this.held.get(this.waiting[i]!.caller) ?? 0
      if (holding < fewest) {
        best = i
        fewest = holding
      }
    }
    return best < 0 ? undefined : this.waiting.splice(best, 1)[0]
  }

  private async open(deadline: number, caller: string, dedicated: boolean): Promise<Conn> {
    const conn: Conn = {
      pool: this as Pool<unknown>,
      socket: undefined,
      connecting: undefined,
      exchange: undefined,
      idleSince: 0,
      reused: false,
      failure: undefined,
      closed: false,
      caller: undefined,
      dedicated,
    }
    if (dedicated) this.streams.add(conn)
    else {
      this.claim(conn, caller)
      this.all.add(conn)
    }
    this.pools.watch(this)
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
    // The address is asked for per connection (the owner's egress check); a connect deadline covers it too.
    this.origin.dial().then(
      (dialed) => {
        if (!conn.closed) this.connect(conn, dialed)
      },
      (error: unknown) => {
        conn.failure ??= error
        connClosed(conn)
      },
    )
    try {
      await ready
    } catch (error) {
      conn.socket?.terminate()
      connClosed(conn)
      throw error
    }
    return conn
  }

  /** Connects `conn` to `dialed`; its wait (conn.connecting) settles once the connection (and its TLS handshake) is up or has failed. */
  private connect(conn: Conn, dialed: Dialed): void {
    const tls = this.origin.tls
    Bun.connect<Conn>({
      hostname: dialed.address,
      port: dialed.port,
      data: conn,
      ...(tls ? { tls } : {}),
      socket: {
        ...handlers,
        ...(tls ? {} : { open: () => conn.connecting?.settle() }),
        // Bytes written before the handshake completes are lost: requests wait for it.
        handshake: (_socket, success, authorizationError) => {
          if (!success || (authorizationError && tls?.rejectUnauthorized !== false))
            conn.failure ??= authorizationError ?? new Error('TLS handshake failed')
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
  }

  idleConn(conn: Conn): void {
    const waiter = this.nextWaiter()
    if (waiter) waiter.resolve(this.claim(conn, waiter.caller))
    else this.idle.push(conn)
  }

  forget(conn: Conn): void {
    if (this.all.delete(conn)) {
      this.unclaim(conn)
      const at = this.idle.indexOf(conn)
      if (at >= 0) this.idle.splice(at, 1)
      // A slot came free: the next waiter opens a connection of its own.
      this.nextWaiter()?.resolve(undefined)
    } else if (!this.streams.delete(conn)) return
    if (this.all.size === 0 && this.streams.size === 0 && this.waiting.length === 0) this.pools.drop(this)
  }

  /** Fails connects and requests past their deadline and closes connections idle too long. */
  sweep(now: number): void {
    for (const conn of [...this.all, ...this.streams]) {
      if (conn.connecting && now >= conn.connecting.deadline) {
        // Decided before the close: closing a handshake in progress reports ECONNRESET as well.
        conn.failure = timedOut()
        closeConn(conn)
      } else if (conn.exchange && now >= conn.exchange.deadline) failExchange(conn, timedOut())
      else if (conn.exchange?.signal?.aborted) failExchange(conn, new ClientGone())
      else if (!conn.exchange && !conn.connecting && now - conn.idleSince >= IDLE_CLOSE_MS && this.idle.includes(conn)) closeConn(conn)
    }
  }

  closeAll(): void {
    for (const conn of [...this.all, ...this.streams]) {
      conn.failure ??= resetError()
      closeConn(conn)
    }
  }
}
