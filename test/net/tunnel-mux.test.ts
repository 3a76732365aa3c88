import { expect, test } from 'bun:test'
import { decode, encode, Frame } from '../../src/net/tunnel/frames'
import {
  MAX_STREAMS,
  OPEN_TIMEOUT_MS,
  OpenRefused,
  PING_MS,
  SILENCE_MS,
  TunnelClosed,
  type TunnelStream,
  WINDOW_BYTES,
} from '../../src/net/tunnel/mux'
import { listen, text, tunnelPair } from './tunnel-pair'

const utf8 = (s: string) => new TextEncoder().encode(s)
const MiB = 1024 * 1024

/** Opens a stream from the platform and returns both ends (the agent's as `incoming` saw it). */
async function openBoth(pair: ReturnType<typeof tunnelPair>, accepted: TunnelStream[]) {
  const platform = await pair.platform.tunnel.open()
  const agent = accepted.at(-1)
  if (!agent || agent.id !== platform.id) throw new Error('the agent did not see the open')
  return { platform, agent }
}

const accepting = (accepted: TunnelStream[]) => (stream: TunnelStream, accept: () => void) => {
  accepted.push(stream)
  accept()
}

test('a stream carries bytes both ways, in order', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent, true, true)
  const atPlatform = listen(platform, true, true)
  expect(platform.write(utf8('GET /version'))).toBe(12)
  expect(agent.write(utf8('HTTP/1.1 200'))).toBe(12)
  expect(platform.write(utf8(' HTTP/1.1'))).toBe(9)
  await pair.settle()
  expect(text(atAgent.chunks)).toBe('GET /version HTTP/1.1')
  expect(text(atPlatform.chunks)).toBe('HTTP/1.1 200')
})

test('a reader that never consumes holds its stream at one window while another stream on the tunnel moves many MiB', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const stalled = await openBoth(pair, accepted)
  const moving = await openBoth(pair, accepted)
  const stalledHeard = listen(stalled.agent, false)
  const movingHeard = listen(moving.agent, true)
  listen(stalled.platform)
  const wrote = listen(moving.platform)
  const block = new Uint8Array(MiB)
  // The stalled stream takes exactly one window of a 4 MiB write and nothing more, ever.
  expect(stalled.platform.write(new Uint8Array(4 * MiB))).toBe(WINDOW_BYTES)
  const total = 32 * MiB
  let sent = 0
  while (sent < total) {
    const taken = moving.platform.write(block.subarray(0, Math.min(block.byteLength, total - sent)))
    sent += taken
    if (taken === 0) {
      const before = wrote.writable
      while (wrote.writable === before) await new Promise((resolve) => setImmediate(resolve))
    }
    expect(stalled.platform.write(block)).toBe(0)
  }
  await pair.settle()
  expect(movingHeard.bytes).toBe(total)
  expect(stalledHeard.bytes).toBe(WINDOW_BYTES)
  expect(stalled.platform.write(block)).toBe(0)
})

test('credits: the window reopens as the consumer takes bytes, in batches, and the sender hears writable', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent, false)
  const atPlatform = listen(platform)
  expect(platform.write(new Uint8Array(WINDOW_BYTES + 10))).toBe(WINDOW_BYTES)
  await pair.settle()
  expect(atAgent.bytes).toBe(WINDOW_BYTES)
  const credits = () => pair.agent.sent.filter((f) => decode(f)?.type === Frame.credit).length
  // A small consumption while the window is shut is credited at once (the sender is waiting)…
  agent.consumed(1000)
  await pair.settle()
  expect(credits()).toBe(1)
  expect(atPlatform.writable).toBe(1)
  // …and while the window is open, credit waits for a quarter of a window.
  agent.consumed(1000)
  agent.consumed(WINDOW_BYTES / 4 - 1001)
  await pair.settle()
  expect(credits()).toBe(1)
  agent.consumed(1)
  await pair.settle()
  expect(credits()).toBe(2)
  expect(platform.write(new Uint8Array(WINDOW_BYTES))).toBe(1000 + WINDOW_BYTES / 4)
})

test('half-close: the platform ends first, the agent answers and ends; both ends close cleanly', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent, true, true)
  const atPlatform = listen(platform, true, true)
  platform.write(utf8('request'))
  platform.end()
  await pair.settle()
  expect(atAgent.ended).toBe(true)
  expect(atAgent.closed).toBe(false)
  expect(platform.write(utf8('more'))).toBe(0)
  // The half the platform ended still carries the answer.
  expect(agent.write(utf8('answer'))).toBe(6)
  agent.end()
  await pair.settle()
  expect(text(atAgent.chunks)).toBe('request')
  expect(text(atPlatform.chunks)).toBe('answer')
  expect(atPlatform.ended).toBe(true)
  expect(atPlatform.closed && atAgent.closed).toBe(true)
  expect(atPlatform.reason).toBeUndefined()
  expect(atAgent.reason).toBeUndefined()
  expect(pair.platform.tunnel.streamCount + pair.agent.tunnel.streamCount).toBe(0)
})

test('half-close: the agent ends first, the platform keeps writing, then ends', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent, true, true)
  const atPlatform = listen(platform)
  agent.end()
  await pair.settle()
  expect(atPlatform.ended).toBe(true)
  expect(platform.write(utf8('still'))).toBe(5)
  platform.end()
  await pair.settle()
  expect(text(atAgent.chunks)).toBe('still')
  expect(atAgent.ended && atAgent.closed && atPlatform.closed).toBe(true)
  expect(atAgent.reason ?? atPlatform.reason).toBeUndefined()
})

test('reset aborts the stream on both ends with the reason, and later frames of it are dropped', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent)
  const atPlatform = listen(platform)
  agent.write(utf8('x'))
  platform.reset('the client went away')
  await pair.settle()
  expect(atPlatform.closed).toBe(true)
  expect(atPlatform.reason).toBe('the client went away')
  expect(atAgent.closed).toBe(true)
  expect(atAgent.reason).toBe('the client went away')
  expect(agent.write(utf8('y'))).toBe(0)
  expect(pair.platform.tunnel.closedReason).toBeUndefined()
  expect(pair.agent.tunnel.closedReason).toBeUndefined()
})

test(`more than ${MAX_STREAMS} streams at once are refused; closing one makes room`, async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const streams = await Promise.all(Array.from({ length: MAX_STREAMS }, () => pair.platform.tunnel.open()))
  expect(pair.agent.tunnel.streamCount).toBe(MAX_STREAMS)
  expect(pair.platform.tunnel.open()).rejects.toBeInstanceOf(OpenRefused)
  streams[0]!.reset('done')
  await pair.settle()
  expect((await pair.platform.tunnel.open()).id).toBe(MAX_STREAMS + 1)
})

test('an agent holding its streams refuses a platform that opens one more than the bound', async () => {
  const pair = tunnelPair((_stream, accept) => accept())
  // A platform that ignores its own bound: opens written straight onto the agent.
  for (let id = 1; id <= MAX_STREAMS + 1; id++) pair.agent.tunnel.receive(encode(Frame.open, id))
  await pair.settle()
  const answers = pair.agent.sent.map((f) => decode(f)!)
  expect(answers.filter((f) => f.type === Frame.openOk)).toHaveLength(MAX_STREAMS)
  expect(answers.filter((f) => f.type === Frame.openRefused).map((f) => f.stream)).toEqual([MAX_STREAMS + 1])
  expect(pair.agent.tunnel.closedReason).toBeUndefined()
})

test('an open the agent does not answer fails at its deadline (tick with the clock), and the agent hears a reset', async () => {
  const waiting: TunnelStream[] = []
  const pair = tunnelPair((stream) => void waiting.push(stream))
  const opening = pair.platform.tunnel.open()
  await pair.settle()
  const atAgent = listen(waiting[0]!)
  pair.clock.now += OPEN_TIMEOUT_MS - 1
  pair.platform.tunnel.tick(pair.clock.now)
  pair.agent.tunnel.tick(pair.clock.now)
  await pair.settle()
  expect(atAgent.closed).toBe(false)
  pair.clock.now += 1
  pair.platform.tunnel.tick(pair.clock.now)
  expect(opening).rejects.toBeInstanceOf(OpenRefused)
  await pair.settle()
  expect(atAgent.closed).toBe(true)
  expect(atAgent.reason).toBe('open timed out')
  expect(pair.platform.tunnel.streamCount).toBe(0)
})

test(`a tunnel that hears nothing for ${SILENCE_MS / 1000} s closes (code 1001) and fails its streams and opens`, async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform } = await openBoth(pair, accepted)
  const atPlatform = listen(platform)
  const waiting = tunnelPair(() => {})
  const opening = waiting.platform.tunnel.open()
  pair.clock.now += SILENCE_MS
  pair.platform.tunnel.tick(pair.clock.now)
  expect(pair.platform.tunnel.closedReason).toBeUndefined()
  pair.clock.now += 1
  pair.platform.tunnel.tick(pair.clock.now)
  expect(pair.platform.tunnel.closedReason).toContain('nothing heard')
  expect(pair.platform.closedWith?.code).toBe(1001)
  expect(atPlatform.closed).toBe(true)
  expect(atPlatform.reason).toContain('tunnel closed')
  await pair.settle()
  expect(pair.agent.tunnel.closedReason).toBeString()
  expect(pair.platform.tunnel.open()).rejects.toBeInstanceOf(TunnelClosed)
  waiting.clock.now += SILENCE_MS + 1
  waiting.platform.tunnel.tick(waiting.clock.now)
  expect(opening).rejects.toBeInstanceOf(TunnelClosed)
})

test('pings go out every 5 s, the peer answers each, and the answers keep the tunnel alive past the silence bound', async () => {
  const pair = tunnelPair()
  const pings = () => pair.platform.sent.filter((f) => decode(f)?.type === Frame.ping).length
  const pongs = () => pair.agent.sent.filter((f) => decode(f)?.type === Frame.pong).length
  pair.clock.now += PING_MS - 1
  pair.platform.tunnel.tick(pair.clock.now)
  expect(pings()).toBe(0)
  for (let round = 1; round <= 6; round++) {
    pair.clock.now += PING_MS
    pair.platform.tunnel.tick(pair.clock.now)
    await pair.settle()
    expect(pings()).toBe(round)
    expect(pongs()).toBe(round)
  }
  // 30 s went by: only the pongs were heard.
  expect(pair.platform.tunnel.closedReason).toBeUndefined()
  // A ping's payload comes back as it went.
  pair.agent.tunnel.receive(encode(Frame.ping, 0, utf8('0123456789abcdef')))
  await pair.settle()
  const echo = decode(pair.agent.sent.at(-1)!)!
  expect(echo.type).toBe(Frame.pong)
  expect(new TextDecoder().decode(echo.payload)).toBe('0123456789abcdef')
})

test('a consumer that reports more bytes than it was handed grants no more than the window', async () => {
  const accepted: TunnelStream[] = []
  const pair = tunnelPair(accepting(accepted))
  const { platform, agent } = await openBoth(pair, accepted)
  const atAgent = listen(agent, false)
  listen(platform)
  platform.write(new Uint8Array(1000))
  await pair.settle()
  agent.consumed(3 * WINDOW_BYTES)
  await pair.settle()
  expect(pair.platform.tunnel.closedReason).toBeUndefined()
  expect(platform.write(new Uint8Array(3 * WINDOW_BYTES))).toBe(WINDOW_BYTES - 1000)
  await pair.settle()
  expect(atAgent.bytes).toBe(WINDOW_BYTES)
  expect(pair.agent.tunnel.closedReason).toBeUndefined()
})
