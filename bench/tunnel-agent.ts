// The agent side of bench/tunnel-protocols.ts, its own process: a target on loopback (the "API
// server": echo, a byte source, an endless firehose), MUX_TUNNELS WebSockets to the platform carrying
// our mux (src/net/tunnel, streams joined to the target by src/net/tunnel/socket-pipe, as the agent
// does), and one carrying SSH (ssh2: this side is the SSH server, `direct-tcpip` channels dialled to
// the target). Usage (spawned by the bench): bun bench/tunnel-agent.ts <platform port>

import { Duplex } from 'node:stream'
import type { Socket } from 'bun'
import { Server as SshServer, utils } from 'ssh2'
import { clientTransport } from '../src/net/tunnel/client-socket'
import { Tunnel } from '../src/net/tunnel/mux'
import { newPiped, type Piped, pipe, pipeHandlers } from '../src/net/tunnel/socket-pipe'

const MUX_TUNNELS = 4
const platformPort = Number(process.argv[2])
let firehoseSent = 0

/** First byte: 'E' echo the rest, 'S' + u32 send that many bytes then end, 'F' send until closed. */
const target = Bun.listen<{ mode?: string; firehose?: boolean }>({
  hostname: '127.0.0.1',
  port: 0,
  data: {},
  socket: {
    open(socket) {
      // Bun.listen's `data` is one object for every connection: each gets its own.
      socket.data = {}
    },
    data(socket, data) {
      let bytes = data as Uint8Array
      if (!socket.data.mode) {
        socket.data.mode = String.fromCharCode(bytes[0]!)
        if (socket.data.mode === 'S') {
          const total = new DataView(bytes.buffer, bytes.byteOffset + 1, 4).getUint32(0)
          return source(socket, total)
        }
        if (socket.data.mode === 'F') {
          socket.data.firehose = true
          return firehose(socket)
        }
        bytes = bytes.subarray(1)
      }
      if (socket.data.mode === 'E' && bytes.byteLength > 0) echo(socket, bytes)
    },
    drain(socket) {
      const pending = echoBacklog.get(socket)
      if (pending) {
        const n = socket.write(pending)
        if (n < pending.byteLength) echoBacklog.set(socket, pending.subarray(n))
        else echoBacklog.delete(socket)
      }
      sourceDrain.get(socket)?.()
      if (socket.data.firehose) firehose(socket)
    },
    close(socket) {
      socket.data.firehose = false
      echoBacklog.delete(socket)
      sourceDrain.delete(socket)
    },
  },
})

type TargetSocket = Socket<{ mode?: string; firehose?: boolean }>
const echoBacklog = new Map<TargetSocket, Uint8Array>()
const sourceDrain = new Map<TargetSocket, () => void>()
const CHUNK = new Uint8Array(64 * 1024)

function echo(socket: TargetSocket, bytes: Uint8Array) {
  const pending = echoBacklog.get(socket)
  if (pending) return void echoBacklog.set(socket, Buffer.concat([pending, bytes]))
  const n = socket.write(bytes)
  if (n < bytes.byteLength) echoBacklog.set(socket, bytes.slice(n))
}

function source(socket: TargetSocket, total: number) {
  let left = total
  const more = () => {
    while (left > 0) {
      const n = socket.write(CHUNK.subarray(0, Math.min(CHUNK.byteLength, left)))
      left -= Math.max(0, n)
      if (n < Math.min(CHUNK.byteLength, left + n)) return
    }
    sourceDrain.delete(socket)
    socket.end()
  }
  sourceDrain.set(socket, more)
  more()
}

function firehose(socket: TargetSocket) {
  while (socket.data.firehose) {
    const n = socket.write(CHUNK)
    firehoseSent += Math.max(0, n)
    if (n < CHUNK.byteLength) return
  }
}

const WebSocketWithOptions = WebSocket as unknown as new (url: string) => WebSocket

function connectMux() {
  const socket = new WebSocketWithOptions(`ws://127.0.0.1:${platformPort}/mux`)
  socket.binaryType = 'arraybuffer'
  let tunnel: Tunnel | undefined
  socket.addEventListener('open', () => {
    tunnel = new Tunnel(clientTransport(socket), {
      role: 'agent',
      now: Date.now,
      incoming(stream, accept, refuse) {
        Bun.connect<Piped>({
          hostname: '127.0.0.1',
          port: target.port,
          data: newPiped(),
          socket: {
            ...pipeHandlers,
            open(s) {
              accept()
              pipe(s, stream)
            },
            connectError: () => refuse('refused'),
          },
        }).catch(() => refuse('refused'))
      },
    })
  })
  socket.addEventListener('message', (event) => tunnel?.receive(new Uint8Array(event.data as ArrayBuffer)))
}

/** A client WebSocket as a Duplex (for ssh2): writes wait while more than 1 MiB is buffered. */
class ClientWebSocketDuplex extends Duplex {
  remoteAddress = '127.0.0.1'
  remotePort = platformPort
  constructor(private readonly socket: WebSocket) {
    super()
    socket.addEventListener('message', (event) => this.push(new Uint8Array(event.data as ArrayBuffer)))
    socket.addEventListener('close', () => this.push(null))
  }
  override _read() {}
  override _write(chunk: Uint8Array, _encoding: string, callback: (error?: Error | null) => void) {
    this.socket.send(chunk)
    if (this.socket.bufferedAmount < 1024 * 1024) return callback()
    const wait = setInterval(() => {
      if (this.socket.bufferedAmount > 256 * 1024) return
      clearInterval(wait)
      callback()
    }, 1)
  }
  override _final(callback: () => void) {
    this.socket.close()
    callback()
  }
  setNoDelay() {}
  setKeepAlive() {}
}

function connectSsh() {
  const hostKey = utils.generateKeyPairSync('ed25519')
  const server = new SshServer({ hostKeys: [hostKey.private] }, (client) => {
    client.on('authentication', (context) => context.accept())
    client.on('ready', () => {
      client.on('tcpip', (accept, reject) => {
        const conn = Bun.connect({
          hostname: '127.0.0.1',
          port: target.port,
          socket: {
            open(s) {
              const channel = accept()
              s.data = channel
              channel.on('data', (bytes: Uint8Array) => {
                const n = s.write(bytes)
                if (n < bytes.byteLength) {
                  backlog.set(s, Buffer.concat([backlog.get(s) ?? new Uint8Array(0), bytes.subarray(n)]))
                  channel.pause()
                }
              })
              channel.on('end', () => s.end())
              channel.on('close', () => s.end())
            },
            data(s, bytes) {
              const channel = s.data as import('ssh2').ServerChannel
              if (!channel.write(bytes)) {
                s.pause()
                channel.once('drain', () => s.resume())
              }
            },
            drain(s) {
              const pending = backlog.get(s)
              if (!pending) return
              const n = s.write(pending)
              if (n < pending.byteLength) backlog.set(s, pending.subarray(n))
              else {
                backlog.delete(s)
                ;(s.data as import('ssh2').ServerChannel).resume()
              }
            },
            end(s) {
              ;(s.data as import('ssh2').ServerChannel | undefined)?.end()
            },
            close(s) {
              ;(s.data as import('ssh2').ServerChannel | undefined)?.end()
              backlog.delete(s)
            },
            connectError: () => reject?.(),
          },
          data: undefined as unknown,
        })
        conn.catch(() => reject?.())
      })
    })
    client.on('error', () => {})
  })
  const socket = new WebSocketWithOptions(`ws://127.0.0.1:${platformPort}/ssh`)
  socket.binaryType = 'arraybuffer'
  socket.addEventListener('open', () => server.injectSocket(new ClientWebSocketDuplex(socket) as never))
}

const backlog = new Map<Socket<unknown>, Uint8Array>()

for (let i = 0; i < MUX_TUNNELS; i++) connectMux()
connectSsh()
process.on('message', (message: unknown) => {
  if (message === 'stats') process.send?.({ firehoseSent, rssMb: process.memoryUsage.rss() / 1e6 })
})
// The bench ended (or died): so does the agent.
process.on('disconnect', () => process.exit(0))
