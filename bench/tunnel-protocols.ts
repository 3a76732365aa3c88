// The comparison that decided the agents' tunnel protocol (docs/benchmarks.md, "Tunnel protocol"):
// our mux (src/net/tunnel) against SSH (ssh2, `direct-tcpip` channels), both over the same Bun
// WebSocket between this process (the platform) and bench/tunnel-agent.ts (the agent, spawned),
// on loopback, in one run. Streams go to a target in the agent process (echo, source, firehose).
// Usage: npm run bench:tunnel [-- --seconds 3]

import { Duplex } from 'node:stream'
import { parseArgs } from 'node:util'
import type { ServerWebSocket } from 'bun'
import { type Channel, Client as SshClient } from 'ssh2'
import { Tunnel, type TunnelStream } from '../src/net/tunnel/mux'

const { values } = parseArgs({ args: process.argv.slice(2), options: { seconds: { type: 'string', default: '3' } } })
const SECONDS = Number(values.seconds)
const MUX_TUNNELS = 4
const step = (text: string) => process.stderr.write(`… ${text}\n`)

/** A stream as the bench uses it, whichever protocol carries it. */
interface Chan {
  send(bytes: Uint8Array): void
  onData(listener: (bytes: Uint8Array) => void): void
  onEnd(listener: () => void): void
  /** Stop taking bytes: nothing is consumed from now on. */
  stall(): void
  /** Bytes received but not consumed (held by this process for this stream). */
  held(): number
  end(): void
  destroy(): void
}

interface Protocol {
  name: string
  open(): Promise<Chan>
}

// ---- our mux

const muxTunnels: Tunnel[] = []
let nextMux = 0

function muxChan(stream: TunnelStream): Chan {
  let queue: Uint8Array[] = []
  let dataListener: (bytes: Uint8Array) => void = () => {}
  let endListener = () => {}
  let stalled = false
  let held = 0
  const flush = () => {
    while (queue.length > 0) {
      const next = queue[0]!
      const taken = stream.write(next)
      if (taken < next.byteLength) {
        queue[0] = next.subarray(taken)
        return
      }
      queue.shift()
    }
  }
  stream.events = {
    data(bytes) {
      if (stalled) {
        held += bytes.byteLength
        return
      }
      dataListener(bytes)
      stream.consumed(bytes.byteLength)
    },
    end: () => endListener(),
    close() {},
    writable: flush,
  }
  return {
    send(bytes) {
      queue.push(bytes)
      if (queue.length === 1) flush()
    },
    onData: (listener) => {
      dataListener = listener
    },
    onEnd: (listener) => {
      endListener = listener
    },
    stall: () => {
      stalled = true
    },
    held: () => held,
    end: () => stream.end(),
    destroy: () => {
      queue = []
      stream.reset('done')
    },
  }
}

const mux: Protocol = {
  name: 'mux',
  async open() {
    // Streams spread over the agent's tunnels (at most 256 each), as the platform picks the least busy.
    const tunnel = muxTunnels.reduce((a, b) => (b.streamCount < a.streamCount ? b : a), muxTunnels[nextMux++ % MUX_TUNNELS]!)
    return muxChan(await tunnel.open())
  },
}

// ---- ssh2

/** The platform's end of a WebSocket as a Duplex: a send over the backpressure limit waits for drain. */
class ServerWebSocketDuplex extends Duplex {
  remoteAddress = '127.0.0.1'
  remotePort = 0
  private waiting: (() => void) | undefined
  constructor(private readonly ws: ServerWebSocket<unknown>) {
    super()
  }
  override _read() {}
  override _write(chunk: Uint8Array, _encoding: string, callback: (error?: Error | null) => void) {
    const result = this.ws.send(chunk)
    if (result === 0) return callback(new Error('dropped'))
    if (result === -1) this.waiting = () => callback()
    else callback()
  }
  drained() {
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.()
  }
  override _final(callback: () => void) {
    this.ws.close()
    callback()
  }
  setNoDelay() {}
  setKeepAlive() {}
}

let sshClient: SshClient | undefined

function sshChan(channel: Channel): Chan {
  let dataListener: (bytes: Uint8Array) => void = () => {}
  let stalled = false
  channel.on('data', (bytes: Uint8Array) => dataListener(bytes))
  return {
    send: (bytes) => void channel.write(bytes),
    onData: (listener) => {
      dataListener = listener
    },
    onEnd: (listener) => void channel.on('end', listener),
    stall: () => {
      stalled = true
      channel.pause()
    },
    held: () => (stalled ? channel.readableLength : 0),
    end: () => void channel.end(),
    destroy: () => void channel.destroy(),
  }
}

const ssh: Protocol = {
  name: 'ssh2',
  open: () =>
    new Promise((resolve, reject) =>
      sshClient!.forwardOut('127.0.0.1', 0, '127.0.0.1', 1, (error, channel) => (error ? reject(error) : resolve(sshChan(channel)))),
    ),
}

// ---- the platform's WebSocket door and the agent process

const server = Bun.serve<{ kind: 'mux' | 'ssh'; tunnel?: Tunnel; duplex?: ServerWebSocketDuplex }>({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request, srv) {
    const kind = new URL(request.url).pathname === '/ssh' ? 'ssh' : 'mux'
    return srv.upgrade(request, { data: { kind } }) ? undefined : new Response('upgrade', { status: 400 })
  },
  websocket: {
    open(ws) {
      if (ws.data.kind === 'mux') {
        ws.data.tunnel = new Tunnel(
          { send: (frame) => ws.send(frame) !== 0, close: (code, reason) => ws.close(code, reason) },
          { role: 'platform', now: Date.now },
        )
        muxTunnels.push(ws.data.tunnel)
        return
      }
      const duplex = new ServerWebSocketDuplex(ws)
      ws.data.duplex = duplex
      const client = new SshClient()
      client.on('ready', () => {
        sshClient = client
      })
      client.on('error', (error) => step(`ssh: ${error.message}`))
      client.connect({ sock: duplex as never, username: 'platform', hostVerifier: () => true })
    },
    message(ws, message) {
      const bytes = message as Uint8Array
      if (ws.data.kind === 'mux') ws.data.tunnel!.receive(bytes)
      else ws.data.duplex!.push(new Uint8Array(bytes))
    },
    drain(ws) {
      ws.data.duplex?.drained()
    },
    close(ws) {
      ws.data.tunnel?.close('closed')
      ws.data.duplex?.push(null)
    },
  },
})

let lastStats: (stats: { firehoseSent: number; rssMb: number }) => void = () => {}
const agent = Bun.spawn([process.execPath, `${import.meta.dir}/tunnel-agent.ts`, String(server.port)], {
  stdout: 'inherit',
  stderr: 'inherit',
  ipc(message) {
    lastStats(message as { firehoseSent: number; rssMb: number })
  },
})
const agentStats = () =>
  new Promise<{ firehoseSent: number; rssMb: number }>((resolve) => {
    lastStats = resolve
    agent.send('stats')
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
for (let waited = 0; muxTunnels.length < MUX_TUNNELS || !sshClient; waited += 50) {
  if (waited > 20_000) throw new Error('the agent did not connect')
  await sleep(50)
}

// ---- the measurements

const header = (mode: string) => {
  const bytes = new Uint8Array(5)
  bytes[0] = mode.charCodeAt(0)
  return bytes
}

async function download(p: Protocol, total: number): Promise<number> {
  const chan = await p.open()
  const start = performance.now()
  let got = 0
  const done = new Promise<void>((resolve) => chan.onEnd(resolve))
  chan.onData((bytes) => {
    got += bytes.byteLength
  })
  const ask = header('S')
  new DataView(ask.buffer).setUint32(1, total)
  chan.send(ask)
  await done
  const seconds = (performance.now() - start) / 1000
  if (got !== total) throw new Error(`${p.name}: downloaded ${got} of ${total}`)
  chan.end()
  return total / 1e6 / seconds
}

/** Sends `bytes` on an echo stream and resolves once as many came back. */
function echoOnce(chan: Chan, bytes: Uint8Array, expected = bytes.byteLength): Promise<void> {
  return new Promise((resolve) => {
    let got = 0
    chan.onData((b) => {
      got += b.byteLength
      if (got >= expected) resolve()
    })
    chan.send(bytes)
  })
}

async function newStreamExchanges(p: Protocol, workers: number): Promise<number> {
  const until = performance.now() + SECONDS * 1000
  let count = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < until) {
        const chan = await p.open()
        const ask = new Uint8Array(201)
        ask[0] = 'E'.charCodeAt(0)
        await echoOnce(chan, ask, 200)
        chan.end()
        count++
      }
    }),
  )
  return count / SECONDS
}

async function roundTrips(p: Protocol, streams: number): Promise<number> {
  const chans = await Promise.all(Array.from({ length: streams }, () => p.open()))
  for (const chan of chans) chan.send(new Uint8Array(['E'.charCodeAt(0)]))
  const until = performance.now() + SECONDS * 1000
  let count = 0
  const message = new Uint8Array(200)
  await Promise.all(
    chans.map(async (chan) => {
      while (performance.now() < until) {
        await echoOnce(chan, message)
        count++
      }
    }),
  )
  for (const chan of chans) chan.end()
  return count / SECONDS
}

async function stalled(p: Protocol): Promise<{ platformHeld: number; inFlight: number; echoSeconds: number }> {
  const before = await agentStats()
  const stuck = await p.open()
  stuck.stall()
  stuck.send(new Uint8Array(['F'.charCodeAt(0)]))
  await sleep(1000)
  const start = performance.now()
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      const chan = await p.open()
      chan.send(new Uint8Array(['E'.charCodeAt(0)]))
      await echoOnce(chan, new Uint8Array(1024 * 1024))
      chan.end()
    }),
  )
  const echoSeconds = (performance.now() - start) / 1000
  await sleep(500)
  const after = await agentStats()
  const platformHeld = stuck.held()
  const inFlight = after.firehoseSent - before.firehoseSent - platformHeld
  stuck.destroy()
  return { platformHeld, inFlight, echoSeconds }
}

/** Platform memory per idle open stream, in KB. */
async function idleStreams(p: Protocol, n: number): Promise<{ rssKb: number; heapKb: number }> {
  Bun.gc(true)
  await sleep(200)
  const rss0 = process.memoryUsage.rss()
  const heap0 = process.memoryUsage().heapUsed
  const chans: Chan[] = []
  for (let i = 0; i < n; i += 50) chans.push(...(await Promise.all(Array.from({ length: 50 }, () => p.open()))))
  await sleep(500)
  Bun.gc(true)
  await sleep(200)
  const rss1 = process.memoryUsage.rss()
  const heap1 = process.memoryUsage().heapUsed
  for (const chan of chans) chan.destroy()
  return { rssKb: (rss1 - rss0) / 1000 / n, heapKb: (heap1 - heap0) / 1000 / n }
}

const results: Record<string, Record<string, number>> = { mux: {}, ssh2: {} }
const record = (p: Protocol, key: string, value: number) => {
  results[p.name]![key] = value
  step(`${p.name} ${key}: ${value.toFixed(2)}`)
}
const load = () =>
  (require('node:os') as typeof import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const loadAtStart = load()

// The two protocols take turns on each measurement, so the machine's load falls on both alike. Memory
// first, while the heap holds nothing of the other measurements.
for (const p of [mux, ssh]) {
  const m = await idleStreams(p, 1000)
  record(p, 'idle: platform RSS KB/stream', m.rssKb)
  record(p, 'idle: platform heap KB/stream', m.heapKb)
}
for (const p of [mux, ssh]) record(p, 'download MB/s', await download(p, 256 * 1024 * 1024))
for (const p of [mux, ssh]) record(p, 'new stream per exchange /s', await newStreamExchanges(p, 16))
for (const p of [mux, ssh]) record(p, 'round trips on 16 streams /s', await roundTrips(p, 16))
for (const p of [mux, ssh]) {
  const s = await stalled(p)
  record(p, 'stalled: platform held KiB', s.platformHeld / 1024)
  record(p, 'stalled: beyond the platform (agent, sockets) KiB', s.inFlight / 1024)
  record(p, 'stalled: 10 × 1 MiB echoes s', s.echoSeconds)
}

const rows = Object.keys(results.mux!)
console.log(`\nTunnel protocols, one run, loopback, ${SECONDS} s per rate; load average at start ${loadAtStart}, at end ${load()}\n`)
console.log('| measurement | mux | ssh2 | mux ÷ ssh2 |')
console.log('|---|---:|---:|---:|')
for (const row of rows) {
  const a = results.mux![row]!
  const b = results.ssh2![row]!
  console.log(`| ${row} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(a / b).toFixed(2)} |`)
}
agent.kill()
server.stop(true)
process.exit(0)
