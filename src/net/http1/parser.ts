/**
 * A strict, incremental reader of HTTP/1.1 answers (status line, headers, body framing), for the
 * kept-alive client (pool.ts). It hands the head and each piece of the body to a sink as they
 * arrive and holds nothing itself but the unfinished head or framing line, so the sink decides
 * whether an answer is kept whole or streamed on. Anything two parsers could read differently is
 * refused (Malformed): bare CR or LF, both Content-Length and Transfer-Encoding, a second
 * Content-Length, a coding other than chunked, obs-fold; the owner then closes the connection.
 */

/** A response head (status line and headers) larger than this is refused. */
export const MAX_HEAD_BYTES = 64 * 1024

/** The answer cannot be read safely; the message says why (it names no header value). */
export class Malformed extends Error {}

/** What a parser reports as it reads one answer. */
export interface AnswerSink {
  /**
   * The final head: lower-case header names (repeated ones joined with ", "), and the declared
   * body length (undefined: chunked, or delimited by the connection's close).
   */
  head(status: number, headers: Record<string, string>, length: number | undefined): void
  /** A piece of the body. `data` is valid during the call only: the socket reuses its buffer. */
  body(data: Buffer): void
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\u0000-\u0008\u000a-\u001f\u007f]*)?$/
const CHUNK_SIZE = /^([0-9a-fA-F]{1,8})(?:[ \t]*;[^\u0000-\u0008\u000a-\u001f\u007f]*)?$/
const TRAILER = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/
/** A chunk-size line (with extensions) longer than this is refused. */
const MAX_CHUNK_LINE = 1024

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

const EMPTY = Buffer.alloc(0)

/** Reads one answer from the bytes of a connection, incrementally. */
export class AnswerParser {
  private head: Buffer | undefined
  private mode: BodyMode | undefined
  private chunk: { state: 'size' | 'data' | 'data-end' | 'trailers'; remaining: number; line: Buffer | undefined } = {
    state: 'size',
    remaining: 0,
    line: undefined,
  }
  private trailerBytes = 0
  /** The answer asks for the connection to be closed (or is HTTP/1.0, or close-delimited). */
  closeAfter = false
  done = false

  constructor(
    private readonly sink: AnswerSink,
    private readonly headRequest: boolean,
  ) {}

  /** Feeds bytes; returns the bytes after the end of the answer (empty when none). Throws Malformed. */
  feed(data: Buffer): Buffer {
    let rest = data
    while (rest.length > 0 && !this.done) {
      if (!this.mode) rest = this.readHead(rest)
      else if (this.mode.kind === 'length') rest = this.readFixed(rest, this.mode)
      else if (this.mode.kind === 'chunked') rest = this.readChunked(rest)
      else if (this.mode.kind === 'close') {
        this.sink.body(rest)
        rest = EMPTY
      }
    }
    return rest
  }

  /** The connection closed: a close-delimited body ends here; anything else is cut short. Throws Malformed. */
  end(): void {
    if (this.done) return
    if (this.mode?.kind === 'close') {
      this.done = true
      return
    }
    throw new Malformed('the connection closed before the answer was complete')
  }

  /** Whether any byte of the answer arrived (a connection closing before that may be retried). */
  get started(): boolean {
    return this.head !== undefined || this.mode !== undefined
  }

  /** Whether the final head has been read (the sink has it). */
  get headRead(): boolean {
    return this.mode !== undefined
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
    const rest = buffered.subarray(end + 4)
    if (this.parseHead(buffered.toString('latin1', 0, end))) {
      // 100 Continue, 102, 103: a final answer follows on the same connection.
      this.head = Buffer.alloc(0)
      return rest
    }
    const mode = this.mode!
    if (mode.kind === 'none' || (mode.kind === 'length' && mode.remaining === 0)) this.done = true
    return rest
  }

  /** Parses the status line and headers and decides the body's framing; true for a 1xx to skip. Throws Malformed. */
  private parseHead(text: string): boolean {
    checkHeadText(text)
    const lower = text.toLowerCase()
    let lineEnd = text.indexOf('\r\n')
    if (lineEnd < 0) lineEnd = text.length
    const statusLine = STATUS_LINE.exec(text.slice(0, lineEnd))
    if (!statusLine) throw new Malformed('bad status line')
    const minor = statusLine[1]
    const status = Number(statusLine[2])
    const headers = Object.create(null) as Record<string, string>
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
      const previous = headers[name]
      headers[name] = previous === undefined ? value : `${previous}, ${value}`
    }
    if (status === 101) throw new Malformed('101 Switching Protocols on a plain request')
    if (status < 200) return true
    this.closeAfter = minor === '0' || connection.split(',').some((token) => token.trim() === 'close')
    if (encodings.length > 0 && lengths.length > 0) throw new Malformed('both Transfer-Encoding and Content-Length')
    if (encodings.length > 1 || (encodings.length === 1 && encodings[0]!.toLowerCase() !== 'chunked'))
      throw new Malformed('a Transfer-Encoding other than chunked')
    if (lengths.length > 1) throw new Malformed('more than one Content-Length')
    if (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0]!)) throw new Malformed('bad Content-Length')
    let length: number | undefined
    if (this.headRequest || status === 204 || status === 304) {
      this.mode = { kind: 'none' }
      length = 0
    } else if (encodings.length === 1) {
      if (minor === '0') throw new Malformed('chunked in HTTP/1.0')
      this.mode = { kind: 'chunked' }
    } else if (lengths.length === 1) {
      length = Number(lengths[0])
      this.mode = { kind: 'length', remaining: length }
    } else {
      this.mode = { kind: 'close' }
      this.closeAfter = true
    }
    this.sink.head(status, headers, length)
    return false
  }

  private readFixed(data: Buffer, mode: { remaining: number }): Buffer {
    const take = Math.min(mode.remaining, data.length)
    this.sink.body(take === data.length ? data : data.subarray(0, take))
    mode.remaining -= take
    if (mode.remaining === 0) this.done = true
    return data.subarray(take)
  }

  private readChunked(data: Buffer): Buffer {
    const chunk = this.chunk
    let rest = data
    while (rest.length > 0 && !this.done) {
      if (chunk.state === 'data') {
        const take = Math.min(chunk.remaining, rest.length)
        this.sink.body(rest.subarray(0, take))
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
        const size = CHUNK_SIZE.exec(line.text)
        if (!size) throw new Malformed('bad chunk size')
        chunk.remaining = Number.parseInt(size[1]!, 16)
        chunk.state = chunk.remaining === 0 ? 'trailers' : 'data'
      } else if (line.text === '') this.done = true
      // Trailers are read and dropped; an empty line ends the answer.
      else if (!TRAILER.test(line.text)) throw new Malformed('bad trailer')
    }
    return rest
  }

  /** One CRLF-terminated line of the chunked framing (kept across reads); undefined until it is complete. */
  private takeLine(data: Buffer): { text: string; rest: Buffer } | undefined {
    const buffered = this.chunk.line ? Buffer.concat([this.chunk.line, data]) : data
    const end = buffered.indexOf('\r\n', 0, 'latin1')
    const limit = this.chunk.state === 'trailers' ? MAX_HEAD_BYTES - this.trailerBytes : MAX_CHUNK_LINE
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
}
