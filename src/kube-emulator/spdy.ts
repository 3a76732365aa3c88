/**
 * The server's part of SPDY/3.1 framing that port-forward uses (kubectl tunnels it in WebSocket
 * binary messages, cut anywhere): frames reassembled from a byte stream, and control frames,
 * data frames and header blocks written. Header blocks are zlib streams with the SPDY/3
 * dictionary, one per direction per session, flushed after each block (node:zlib does the zlib).
 */
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib'

export const CONTROL = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const

export const FLAG_FIN = 0x01

/** RST_STREAM status codes. */
export const RST = { protocolError: 1, refusedStream: 3, cancel: 5 } as const

export type Frame =
  | { control: true; type: number; flags: number; payload: Uint8Array }
  | { control: false; streamId: number; flags: number; data: Uint8Array }

/** The SPDY/3 header compression dictionary (the protocol's draft 3, "Compression"): length-prefixed names, then a tail of common values. */
const DICTIONARY_WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
]
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.'

export const HEADER_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.flatMap((word) => [u32(word.length), Buffer.from(word, 'latin1')]),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
])

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

class SpdyError extends Error {}

/** Reassembles frames from the bytes of a session, whatever the message boundaries. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0)

  /** A frame announcing a larger payload than its kind's limit is a protocol error (memory stays bounded). */
  constructor(private readonly limits: { data: number; control: number }) {}

  /** The frames completed by `bytes`; throws SpdyError on a frame that is too large or of another version. */
  push(bytes: Uint8Array): Frame[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, bytes]) : Buffer.from(bytes)
    const frames: Frame[] = []
    while (this.buffered.length >= 8) {
      const b = this.buffered
      const length = b.readUInt32BE(4) & 0xffffff
      const limit = b[0] & 0x80 ? this.limits.control : this.limits.data
      if (length > limit) throw new SpdyError(`frame of ${length} bytes exceeds ${limit}`)
      if (b.length < 8 + length) break
      const flags = b[4]
      const payload = new Uint8Array(b.subarray(8, 8 + length))
      if (b[0] & 0x80) {
        const version = b.readUInt16BE(0) & 0x7fff
        if (version !== 3) throw new SpdyError(`unsupported SPDY version ${version}`)
        frames.push({ control: true, type: b.readUInt16BE(2), flags, payload })
      } else frames.push({ control: false, streamId: b.readUInt32BE(0) & 0x7fffffff, flags, data: payload })
      this.buffered = b.subarray(8 + length)
    }
    return frames
  }
}

export function controlFrame(type: number, flags: number, payload: Uint8Array): Uint8Array {
  const head = Buffer.alloc(8)
  head.writeUInt16BE(0x8003, 0)
  head.writeUInt16BE(type, 2)
  head.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4)
  return Buffer.concat([head, payload])
}

export function dataFrame(streamId: number, flags: number, data: Uint8Array): Uint8Array {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(streamId & 0x7fffffff, 0)
  head.writeUInt32BE(((flags << 24) | data.length) >>> 0, 4)
  return Buffer.concat([head, data])
}

export const synReply = (streamId: number, headerBlock: Uint8Array) =>
  controlFrame(CONTROL.synReply, 0, Buffer.concat([u32(streamId), headerBlock]))
export const rstStream = (streamId: number, status: number) =>
  controlFrame(CONTROL.rstStream, 0, Buffer.concat([u32(streamId), u32(status)]))
export const goAway = (lastStreamId: number, status: number) =>
  controlFrame(CONTROL.goAway, 0, Buffer.concat([u32(lastStreamId), u32(status)]))

/** A SYN_STREAM's stream id and its (still compressed) header block. */
export function synStreamOf(payload: Uint8Array): { streamId: number; block: Uint8Array } {
  if (payload.length < 10) throw new SpdyError('SYN_STREAM too short')
  return { streamId: Buffer.from(payload).readUInt32BE(0) & 0x7fffffff, block: payload.subarray(10) }
}

/** The stream id a RST_STREAM, WINDOW_UPDATE or HEADERS frame names. */
export const streamIdOf = (payload: Uint8Array) => (payload.length >= 4 ? Buffer.from(payload).readUInt32BE(0) & 0x7fffffff : 0)

/** Decodes a header block (pairs of length-prefixed names and NUL-separated values) into lowercase names. */
function decodeHeaders(block: Buffer): Map<string, string[]> {
  const headers = new Map<string, string[]>()
  let at = 0
  const read = () => {
    if (at + 4 > block.length) throw new SpdyError('truncated header block')
    const length = block.readUInt32BE(at)
    if (at + 4 + length > block.length) throw new SpdyError('truncated header block')
    const text = block.subarray(at + 4, at + 4 + length).toString('latin1')
    at += 4 + length
    return text
  }
  const count = block.length >= 4 ? block.readUInt32BE(0) : 0
  at = 4
  for (let i = 0; i < count; i++) {
    const name = read().toLowerCase()
    headers.set(name, read().split('\0'))
  }
  return headers
}

/**
 * The two zlib streams of a session: the client's header blocks in, ours out. Each block is
 * written and flushed (Z_SYNC_FLUSH), so the peer's single stream decodes it at once.
 */
export class HeaderCodec {
  private readonly inflater: Inflate = createInflate({ dictionary: HEADER_DICTIONARY })
  private readonly deflater: Deflate = createDeflate({ dictionary: HEADER_DICTIONARY })

  /** `maxBytes`: a block inflating to more is refused (a compression bomb stays small). */
  constructor(private readonly maxBytes: number) {
    // Errors surface through the flush callbacks' missing output; the streams must not throw unhandled.
    this.inflater.on('error', () => {})
    this.deflater.on('error', () => {})
  }

  async decode(block: Uint8Array): Promise<Map<string, string[]>> {
    return decodeHeaders(await this.run(this.inflater, block, this.maxBytes))
  }

  /** Our header block (header names lowercase, as SPDY/3 requires). */
  encode(headers: Record<string, string>): Promise<Buffer> {
    const entries = Object.entries(headers)
    const parts = [u32(entries.length)]
    for (const [name, value] of entries)
      parts.push(u32(name.length), Buffer.from(name, 'latin1'), u32(value.length), Buffer.from(value, 'latin1'))
    return this.run(this.deflater, Buffer.concat(parts), Number.POSITIVE_INFINITY)
  }

  private run(stream: Inflate | Deflate, input: Uint8Array, limit: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let size = 0
      const onData = (chunk: Buffer) => {
        size += chunk.length
        if (size <= limit) chunks.push(chunk)
      }
      const onError = (error: Error) => {
        stream.off('data', onData)
        reject(new SpdyError(`header block: ${error.message}`))
      }
      stream.on('data', onData)
      stream.once('error', onError)
      stream.write(input)
      stream.flush(constants.Z_SYNC_FLUSH, () => {
        stream.off('data', onData)
        stream.off('error', onError)
        if (size > limit) reject(new SpdyError(`header block larger than ${limit} bytes`))
        else resolve(Buffer.concat(chunks))
      })
    })
  }

  close(): void {
    this.inflater.destroy()
    this.deflater.destroy()
  }
}
