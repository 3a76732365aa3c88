import type { AnswerSink } from './parser'

/**
 * What becomes of an answer's body as it arrives (pool.ts): kept whole while it fits what its caller
 * and the process may buffer, or handed on as a stream that reads the connection only as fast as
 * its consumer takes the bytes. Memory held for answers is bounded: by a byte budget for the
 * process, by a share of it per caller, and, for a caller that takes streams, by STREAM_ABOVE per
 * answer.
 */

/** With `large: 'stream'`, an answer longer than this is streamed rather than buffered. */
const STREAM_ABOVE_BYTES = 1024 * 1024
/** Bodies up to this declared length get their buffer at once. */
const PREALLOCATE_BYTES = 1024 * 1024
/** What a stream holds for a consumer that has not taken it yet before the connection stops being read. */
const STREAM_HIGH_WATER_BYTES = 256 * 1024

export interface Answer {
  status: number
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Uint8Array<ArrayBuffer>
}

export interface StreamedAnswer {
  status: number
  headers: Record<string, string>
  body: ReadableStream<Uint8Array>
}

/** How a caller takes an answer too large to buffer: as a stream, or not at all (AnswerTooLarge, BudgetExhausted). */
export type LargeAnswers = 'stream' | 'refuse'
/** How a collector takes its answer: as LargeAnswers says, or ('always': a watch, a followed log) as a stream from its head on. */
export type AnswerTaking = LargeAnswers | 'always'

/** An answer longer than one caller may buffer, for a caller that needs it whole. */
export class AnswerTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`)
  }
}

/** The process's budget (or the caller's share of it) is taken by other answers for now: try again shortly. */
export class BudgetExhausted extends Error {}

/**
 * The bytes buffered for answers in flight, in all and per caller: `take` says whether `bytes` more
 * fit both the process's budget and the caller's share; `give` returns them.
 */
export class ByteBudget {
  private used = 0
  private readonly byCaller = new Map<string, number>()

  constructor(
    readonly total: number,
    readonly perCaller: number,
  ) {}

  take(caller: string, bytes: number): boolean {
    const callers = this.byCaller.get(caller) ?? 0
    if (this.used + bytes > this.total || callers + bytes > this.perCaller) return false
    this.used += bytes
    this.byCaller.set(caller, callers + bytes)
    return true
  }

  give(caller: string, bytes: number): void {
    if (bytes === 0) return
    this.used -= bytes
    const left = this.byCaller.get(caller)! - bytes
    if (left > 0) this.byCaller.set(caller, left)
    else this.byCaller.delete(caller)
  }

  /** Bytes buffered right now (all callers). */
  get inUse(): number {
    return this.used
  }
}

/** What a streamed answer needs of its connection. */
export interface Flow {
  /** The consumer has enough: stop reading the connection. */
  pause(): void
  /** The consumer wants more: read again. */
  resume(): void
  /** Bytes went to the consumer (or the stream began): the member's silence is timed from now. */
  progress(): void
  /** The consumer went away: the connection cannot be read to the answer's end. */
  cancel(): void
}

/** One answer as it arrives: settled once, whole (complete) or as a stream (from its head, or from the moment it is too large to buffer). */
export class AnswerCollector implements AnswerSink {
  private status = 0
  private headers: Record<string, string> = {}
  private pieces: Uint8Array<ArrayBuffer>[] = []
  private size = 0
  private fixed: Uint8Array<ArrayBuffer> | undefined
  /** Bytes taken from the budget for this answer. */
  private reserved = 0
  private stream: ReadableStreamDefaultController<Uint8Array> | undefined
  private paused = false

  constructor(
    private readonly budget: ByteBudget,
    private readonly caller: string,
    private readonly large: AnswerTaking,
    private readonly flow: Flow,
    private readonly resolve: (answer: Answer | StreamedAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Whether the answer has been handed on as a stream (its end and errors go to the stream now). */
  get streaming(): boolean {
    return this.stream !== undefined
  }

  head(status: number, headers: Record<string, string>, length: number | undefined): void {
    this.status = status
    this.headers = headers
    if (this.large === 'always') return this.startStream()
    if (length === undefined || length === 0) return
    if (this.large === 'stream' && length > STREAM_ABOVE_BYTES) return this.startStream()
    if (!this.reserve(length)) return
    // A small body is copied into place once; a large one grows as it arrives (its reservation taken already).
    if (length <= PREALLOCATE_BYTES) this.fixed = new Uint8Array(length)
  }

  body(data: Buffer): void {
    if (this.stream) return this.forward(new Uint8Array(data))
    if (this.fixed) {
      this.fixed.set(data, this.size)
      this.size += data.length
      return
    }
    if (this.reserved < this.size + data.length) {
      if (this.large === 'stream' && this.size + data.length > STREAM_ABOVE_BYTES) {
        this.startStream()
        return this.forward(new Uint8Array(data))
      }
      if (!this.reserve(this.size + data.length - this.reserved)) return this.forward(new Uint8Array(data))
    }
    this.pieces.push(new Uint8Array(data))
    this.size += data.length
  }

  /** The answer ended where its framing said. */
  complete(): void {
    if (this.stream) return this.stream.close()
    const body = this.fixed ?? (this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.size))
    this.release()
    this.resolve({ status: this.status, headers: this.headers, body })
  }

  /** The answer cannot be had: the call fails, or the stream breaks off. */
  fail(error: unknown): void {
    this.release()
    if (this.stream) this.stream.error(error)
    else this.reject(error)
  }

  /**
   * Takes `bytes` more from the budget; when they do not fit, a streaming caller gets its stream
   * (false: the bytes go there) and any other is refused. Throws AnswerTooLarge, BudgetExhausted.
   */
  private reserve(bytes: number): boolean {
    if (this.budget.take(this.caller, bytes)) {
      this.reserved += bytes
      return true
    }
    if (this.large === 'stream') {
      this.startStream()
      return false
    }
    if (this.reserved + bytes > this.budget.perCaller) throw new AnswerTooLarge(this.budget.perCaller)
    throw new BudgetExhausted()
  }

  private release(): void {
    this.budget.give(this.caller, this.reserved)
    this.reserved = 0
  }

  /** Hands the answer on now, with what was buffered so far as its first bytes, and gives the budget back. */
  private startStream(): void {
    const buffered = this.fixed ? this.fixed.subarray(0, this.size) : Buffer.concat(this.pieces, this.size)
    this.fixed = undefined
    this.pieces = []
    this.release()
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.stream = controller
        },
        pull: () => {
          if (!this.paused) return
          this.paused = false
          this.flow.resume()
        },
        cancel: () => this.flow.cancel(),
      },
      { highWaterMark: STREAM_HIGH_WATER_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
    )
    if (buffered.length > 0) this.stream!.enqueue(new Uint8Array(buffered))
    this.flow.progress()
    this.resolve({ status: this.status, headers: this.headers, body })
  }

  private forward(chunk: Uint8Array): void {
    this.stream!.enqueue(chunk)
    this.flow.progress()
    if ((this.stream!.desiredSize ?? 0) > 0 || this.paused) return
    this.paused = true
    this.flow.pause()
  }
}
