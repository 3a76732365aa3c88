/**
 * A hostile agent and a hostile platform: frames written straight into a real Tunnel (the other
 * end is this test). The receiver never throws, closes the tunnel (WebSocket code 1002) on each
 * protocol violation, and never hands a stream's consumer more than the stream's window.
 */
import { describe, expect, test } from 'bun:test'
import { encode, encodeCredit, encodeText, Frame, HEADER_BYTES, MAX_CONTROL_BYTES, MAX_DATA_BYTES } from '../../src/net/tunnel/frames'
import { type FrameTransport, Tunnel, type TunnelStream, WINDOW_BYTES } from '../../src/net/tunnel/mux'
import { seededRandom } from '../support/fuzz'

interface Target {
  tunnel: Tunnel
  /** Frames the tunnel sent to the hostile peer. */
  sent: Uint8Array[]
  closes: { code: number; reason: string }[]
  /** Per stream: bytes handed to its consumer and not consumed, and the most that ever was. */
  held: Map<number, { now: number; most: number }>
  incomingCalls: number
  /** Frames the tunnel sent after its transport was closed. */
  sentAfterClose: number
}

/** The tunnel under attack; `consume` decides how much of each chunk its consumers take (0: none). */
function target(role: 'platform' | 'agent', consume: (bytes: number) => number = () => 0): Target {
  const t = { sent: [], closes: [], held: new Map(), incomingCalls: 0, sentAfterClose: 0 } as unknown as Target
  const transport: FrameTransport = {
    send(frame) {
      if (t.closes.length > 0) t.sentAfterClose++
      t.sent.push(frame)
      return true
    },
    close(code, reason) {
      t.closes.push({ code, reason })
    },
  }
  const watch = (stream: TunnelStream) => {
    const held = { now: 0, most: 0 }
    t.held.set(stream.id, held)
    stream.events = {
      data(bytes) {
        held.now += bytes.byteLength
        held.most = Math.max(held.most, held.now)
        const taken = Math.min(held.now, consume(bytes.byteLength))
        held.now -= taken
        stream.consumed(taken)
      },
      end() {},
      close() {},
      writable() {},
    }
  }
  t.tunnel = new Tunnel(transport, {
    role,
    now: () => 0,
    ...(role === 'agent'
      ? {
          incoming(stream, accept) {
            t.incomingCalls++
            watch(stream)
            accept()
          },
        }
      : {}),
  })
  if (role === 'platform') for (let i = 0; i < 4; i++) t.tunnel.open().then(watch, () => {})
  return t
}

const bytes = (n: number) => new Uint8Array(n)
const settle = () => new Promise((resolve) => setImmediate(resolve))

/** A platform whose streams 1 and 2 the agent accepted (stream 3 and 4 wait for an answer). */
async function platformWithStreams(): Promise<Target> {
  const t = target('platform')
  t.tunnel.receive(encode(Frame.openOk, 1))
  t.tunnel.receive(encode(Frame.openOk, 2))
  await settle()
  return t
}

const fullWindow = () => Array.from({ length: WINDOW_BYTES / MAX_DATA_BYTES }, () => encode(Frame.data, 1, bytes(MAX_DATA_BYTES)))

const AGENT_VIOLATIONS: [string, Uint8Array[]][] = [
  ['a message shorter than a header', [new Uint8Array(HEADER_BYTES - 1).fill(4)]],
  ['an unknown frame type', [encode(200 as never, 1)]],
  ['data before the open was answered', [encode(Frame.data, 3, bytes(10))]],
  ['data beyond the window', [...fullWindow(), encode(Frame.data, 1, bytes(1))]],
  ['a data frame over 64 KiB', [encode(Frame.data, 1, bytes(MAX_DATA_BYTES + 1))]],
  ['a credit that opens the window beyond its size', [encodeCredit(1, 1)]],
  ['a credit of 2^32-1', [encodeCredit(2, 0xffffffff)]],
  ['a credit with a 3-byte count', [encode(Frame.credit, 1, bytes(3))]],
  ['fin twice', [encode(Frame.fin, 1), encode(Frame.fin, 1)]],
  ['data after fin', [encode(Frame.fin, 1), encode(Frame.data, 1, bytes(1))]],
  ['a fin with a payload', [encode(Frame.fin, 1, bytes(1))]],
  ['an open from the agent', [encode(Frame.open, 9)]],
  ['a ping with a 17-byte payload', [encode(Frame.ping, 0, bytes(17))]],
  ['a ping with the largest control payload', [encode(Frame.ping, 0, bytes(MAX_CONTROL_BYTES))]],
  ['a second hello', [encodeText(Frame.hello, 0, '{}')]],
  ['a welcome sent to the platform', [encode(Frame.welcome, 0)]],
  ['data on stream 0', [encode(Frame.data, 0, bytes(1))]],
  ['an open answer on stream 0', [encode(Frame.openOk, 0)]],
]

const PLATFORM_VIOLATIONS: [string, Uint8Array[]][] = [
  ['an open carrying an address', [encodeText(Frame.open, 1, '10.0.0.1:22')]],
  ['an open answer sent to the agent', [encode(Frame.openOk, 1)]],
  ['stream ids that do not grow', [encode(Frame.open, 5), encode(Frame.open, 3)]],
  ['an open of stream 0', [encode(Frame.open, 0)]],
  ['data beyond the window', [encode(Frame.open, 1), ...fullWindow(), encode(Frame.data, 1, bytes(1))]],
  ['a credit that opens the window beyond its size', [encode(Frame.open, 1), encodeCredit(1, 1)]],
  ['a hello from the platform', [encodeText(Frame.hello, 0, '{}')]],
  ['a zero-length message', [new Uint8Array(0)]],
]

describe('a hostile agent: the platform closes the tunnel (1002)', () => {
  for (const [name, frames] of AGENT_VIOLATIONS)
    test(name, async () => {
      const t = await platformWithStreams()
      for (const frame of frames) expect(() => t.tunnel.receive(frame)).not.toThrow()
      expect(t.tunnel.closedReason).toBeString()
      expect(t.closes).toEqual([{ code: 1002, reason: expect.any(String) }])
      expect(t.sentAfterClose).toBe(0)
    })
})

describe('a hostile platform: the agent closes the tunnel (1002)', () => {
  for (const [name, frames] of PLATFORM_VIOLATIONS)
    test(name, () => {
      const t = target('agent')
      for (const frame of frames) expect(() => t.tunnel.receive(frame)).not.toThrow()
      expect(t.closes).toEqual([{ code: 1002, reason: expect.any(String) }])
      if (name === 'an open carrying an address') expect(t.incomingCalls).toBe(0)
    })
})

test('frames that are late, not hostile, are dropped and the tunnel stays', async () => {
  const t = await platformWithStreams()
  const late = [
    encode(Frame.data, 99, bytes(10)),
    encodeCredit(99, 5),
    encode(Frame.fin, 99),
    encodeText(Frame.reset, 99, 'x'.repeat(5000)),
    encode(Frame.openOk, 99),
    encodeText(Frame.openRefused, 98, 'late'),
    encode(Frame.pong, 0, bytes(1000)),
    encodeText(Frame.reset, 2, 'the API server closed'),
    encode(Frame.data, 2, bytes(10)),
  ]
  for (const frame of late) t.tunnel.receive(frame)
  expect(t.tunnel.closedReason).toBeUndefined()
  expect(t.closes).toEqual([])
})

/** One random message: often a plausible frame of a live stream, sometimes garbage. */
function randomMessage(random: () => number): Uint8Array {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!
  if (random() < 0.05) return crypto.getRandomValues(new Uint8Array(Math.floor(random() * 6)))
  const type = random() < 0.05 ? pick([0, 12, 99, 255]) : pick(Object.values(Frame) as number[])
  const stream = pick([0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 0xffffffff, Math.floor(random() * 2 ** 32)])
  let payload: Uint8Array
  if (type === Frame.credit && random() < 0.8) {
    payload = new Uint8Array(4)
    new DataView(payload.buffer).setUint32(0, pick([0, 1, 1024, 64 * 1024, WINDOW_BYTES, 0xffffffff]))
  } else if (type === Frame.data) payload = bytes(pick([0, 1, 100, 4096, MAX_DATA_BYTES, MAX_DATA_BYTES + 1]))
  else if (random() < 0.7) payload = bytes(0)
  else payload = bytes(pick([1, 4, 16, 17, 200, 64 * 1024, 64 * 1024 + 1]))
  return encode(type as never, stream, payload)
}

describe('random frames from both ends', () => {
  for (const role of ['platform', 'agent'] as const)
    for (const consuming of [false, true])
      test(`against the ${role}, ${consuming ? 'with consumers that take part of what they get' : 'with consumers that never consume'}`, async () => {
        let closedByViolation = 0
        for (let seed = 1; seed <= 300; seed++) {
          const random = seededRandom(seed * 7919 + (role === 'agent' ? 1 : 0) + (consuming ? 2 : 0))
          const t = target(role, consuming ? (n) => Math.floor(random() * (n + 1)) : () => 0)
          if (role === 'platform') {
            for (const id of [1, 2]) t.tunnel.receive(encode(Frame.openOk, id))
            await settle()
          }
          for (let i = 0; i < 60; i++) {
            const message = randomMessage(random)
            // Whole windows of data now and then, so the window bound is reached.
            const burst = random() < 0.1 ? 5 : 1
            for (let b = 0; b < burst; b++) expect(() => t.tunnel.receive(message)).not.toThrow()
            if (random() < 0.2) expect(() => t.tunnel.tick(Math.floor(random() * 20_000))).not.toThrow()
          }
          for (const held of t.held.values()) expect(held.most).toBeLessThanOrEqual(WINDOW_BYTES)
          expect(t.closes.length).toBeLessThanOrEqual(1)
          expect(t.sentAfterClose).toBe(0)
          if (t.closes[0]?.code === 1002) closedByViolation++
        }
        // Most random sequences break a rule somewhere; each of those ended the tunnel.
        expect(closedByViolation).toBeGreaterThan(200)
      })
})
