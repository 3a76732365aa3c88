/**
 * The tunnel's frames (docs/agents.md, "The tunnel protocol"): one WebSocket binary message is one
 * frame, `type (u8) | stream id (u32, big-endian) | payload`. Nothing here trusts the peer: `decode`
 * returns undefined for a message that is no frame, and the mux checks every field against its state.
 */

export const Frame = {
  /** platform → agent: open stream `id` to the agent's API server. No payload. */
  open: 1,
  /** agent → platform: stream `id` is connected. No payload. */
  openOk: 2,
  /** agent → platform: stream `id` could not be connected; payload: the reason (UTF-8). */
  openRefused: 3,
  /** either way: bytes of stream `id`, at most MAX_DATA, never more than the receiver's window. */
  data: 4,
  /** either way: the receiver consumed this many more bytes of stream `id` (u32): the sender may send them. */
  credit: 5,
  /** either way: the sender will send no more bytes on stream `id` (half-close). No payload. */
  fin: 6,
  /** either way: stream `id` is aborted; payload: the reason (UTF-8). */
  reset: 7,
  /** either way, stream 0: are you there? payload (at most 16 bytes) is echoed. */
  ping: 8,
  /** either way, stream 0: the echo of a ping. */
  pong: 9,
  /** agent → platform, stream 0, once and first: the cluster's facts as JSON (docs/agents.md). */
  hello: 10,
  /** platform → agent, stream 0: the hello was accepted; streams may be opened. No payload. */
  welcome: 11,
} as const

export type FrameType = (typeof Frame)[keyof typeof Frame]

/** Bytes before the payload. */
export const HEADER_BYTES = 5
/** The largest DATA payload: a larger one is a protocol error. */
export const MAX_DATA_BYTES = 64 * 1024
/** The largest payload of any other frame (reasons, pings, the hello). */
export const MAX_CONTROL_BYTES = 64 * 1024

const TYPES = new Set<number>(Object.values(Frame))
/** Frames that carry nothing: an OPEN with a payload (an address, say) is malformed. */
const EMPTY = new Set<number>([Frame.open, Frame.openOk, Frame.fin, Frame.welcome])

export interface DecodedFrame {
  type: FrameType
  stream: number
  payload: Uint8Array
}

/** One frame as a message. */
export function encode(type: FrameType, stream: number, payload?: Uint8Array): Uint8Array {
  const frame = new Uint8Array(HEADER_BYTES + (payload?.byteLength ?? 0))
  const view = new DataView(frame.buffer)
  view.setUint8(0, type)
  view.setUint32(1, stream)
  if (payload) frame.set(payload, HEADER_BYTES)
  return frame
}

export const encodeText = (type: FrameType, stream: number, text: string) => encode(type, stream, new TextEncoder().encode(text))

export function encodeCredit(stream: number, bytes: number): Uint8Array {
  const payload = new Uint8Array(4)
  new DataView(payload.buffer).setUint32(0, bytes)
  return encode(Frame.credit, stream, payload)
}

/** The frame a message holds, or undefined: shorter than a header, an unknown type, a payload over its type's limit or on a frame that carries none. */
export function decode(message: Uint8Array): DecodedFrame | undefined {
  if (message.byteLength < HEADER_BYTES) return undefined
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength)
  const type = view.getUint8(0)
  if (!TYPES.has(type)) return undefined
  const payload = message.subarray(HEADER_BYTES)
  if (payload.byteLength > (type === Frame.data ? MAX_DATA_BYTES : MAX_CONTROL_BYTES)) return undefined
  if (EMPTY.has(type) && payload.byteLength > 0) return undefined
  return { type: type as FrameType, stream: view.getUint32(1), payload }
}

/** A credit frame's count, or undefined when the payload is not 4 bytes. */
export const creditOf = (payload: Uint8Array): number | undefined =>
  payload.byteLength === 4 ? new DataView(payload.buffer, payload.byteOffset, 4).getUint32(0) : undefined

/** A reason as text, cut to 200 characters (it goes into messages). */
export const reasonOf = (payload: Uint8Array): string => new TextDecoder().decode(payload).slice(0, 200)
