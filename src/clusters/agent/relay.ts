import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Socket, TCPSocketListener } from 'bun'
import type { Deps } from '../../deps'
import { messageOf } from '../../errors'
import { drainJoined, endJoined, forward, type Joined, joinSockets, newJoined } from '../../net/tunnel/socket-join'
import { newPiped, type Piped, pipe, pipeHandlers } from '../../net/tunnel/socket-pipe'
import { readFact, writeFact } from '../../storage/deployment-facts'
import type { AgentTunnels } from './tunnels'

/**
 * How the member client reaches an agent cluster, whichever process holds its tunnel (docs/agents.md,
 * "Several platform processes"). The member client dials a loopback port of this process, one per
 * agent cluster (relayed bytes are the client's TLS to the API server, so the pool, streams and
 * upgrades stay the member client's one code path). A connection there becomes a stream of a tunnel
 * held here, or is joined to a connection to the holding process's peer listener. A peer connection
 * proves it comes from a process of this deployment by answering the listener's random challenge
 * with an HMAC under a key kept in the database; it names the tunnel, never an address.
 */

const NONCE_BYTES = 32
/** The longest first line a peer may send: `<tunnel id> <hmac hex>\n`. */
const MAX_PEER_LINE = 200
const PEER_KEY_FACT = 'agent-peer-key'
const OK = 1
const REFUSED = 0

/** A connection on a cluster's loopback port: piped into a local tunnel, or joined to a peer (`other`). */
type RelayData = Piped & Joined
/** A connection on the peer listener: the challenge, then piped into the named tunnel. */
type PeerData = Piped & { nonce: string; line: string; authorized: boolean }
/** Our connection to another process's peer listener: the challenge answered, then joined to a relay connection. */
type PeerClientData = Joined & { nonce: Buffer | undefined; answered: boolean; settle(accepted?: Socket<PeerClientData>): void }
const joined = <T extends Joined>(socket: Socket<T>) => socket as unknown as Socket<Joined>

export class Relays {
  private readonly ports = new Map<number, number>()
  private readonly listeners = new Map<number, TCPSocketListener<RelayData>>()
  private peer: Promise<{ listener: TCPSocketListener<PeerData>; address: string }> | undefined
  private key: Promise<Buffer> | undefined

  constructor(
    private readonly deps: Deps,
    private readonly tunnels: AgentTunnels,
  ) {}

  /** The loopback port of `clusterId`'s relay (opened on first use). */
  portFor(clusterId: number): number {
    let port = this.ports.get(clusterId)
    if (port === undefined) {
      port = this.listen(clusterId)
      this.ports.set(clusterId, port)
    }
    return port
  }

  /** The cluster is gone: its relay port closes. */
  forget(clusterId: number): void {
    this.listeners.get(clusterId)?.stop(true)
    this.listeners.delete(clusterId)
    this.ports.delete(clusterId)
  }

  /** host:port where other processes reach this one's tunnels (PLATFORM_PEER_HOST, an ephemeral port). */
  async peerAddress(): Promise<string> {
    this.peer ??= this.listenForPeers()
    return (await this.peer).address
  }

  close(): void {
    for (const listener of this.listeners.values()) listener.stop(true)
    void this.peer?.then(({ listener }) => listener.stop(true))
  }

  private listen(clusterId: number): number {
    const listener = Bun.listen<RelayData>({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open: (socket) => {
          socket.data = { ...newPiped(), ...newJoined() }
          socket.pause()
          this.route(clusterId, socket).catch((error: unknown) => {
            this.deps.log.error('agent relay failed', { clusterId, error: messageOf(error) })
            socket.terminate()
          })
        },
        data: (socket, data) => {
          const peer = socket.data.other
          return peer ? forward(peer, data, joined(socket)) : pipeHandlers.data(socket, data)
        },
        drain: (socket) => (socket.data.other ? drainJoined(joined(socket)) : pipeHandlers.drain(socket)),
        end: (socket) => (socket.data.other ? endJoined(joined(socket)) : pipeHandlers.end(socket)),
        close: (socket) => (socket.data.other ? endJoined(joined(socket)) : pipeHandlers.close(socket)),
        error: (socket) => (socket.data.other ? endJoined(joined(socket)) : pipeHandlers.error(socket)),
      },
    })
    this.listeners.set(clusterId, listener)
    return listener.port
  }

  /** A connection on the relay: into a tunnel held here, else through a process that holds one. */
  private async route(clusterId: number, socket: Socket<RelayData>): Promise<void> {
    const local = this.tunnels.localTunnel(clusterId)
    if (local) {
      pipe(socket, await local.tunnel.open())
      socket.resume()
      return
    }
    for (const row of shuffled(await this.tunnels.liveTunnels(clusterId))) {
      const peer = await this.dialPeer(row.peerAddress, row.id).catch(() => undefined)
      if (!peer) continue
      joinSockets(joined(socket), peer, socket.data.toTunnel)
      socket.data.toTunnel = undefined
      socket.resume()
      return
    }
    socket.terminate()
  }

  /** Connects to a peer listener and asks for tunnel `tunnelId`; resolves once it said yes. */
  private async dialPeer(address: string, tunnelId: string): Promise<Socket<Joined>> {
    const [host, port] = splitAddress(address)
    const key = await this.peerKey()
    return new Promise((resolve, reject) => {
      const data: PeerClientData = {
        ...newJoined(),
        nonce: undefined,
        answered: false,
        settle: (accepted) => (accepted ? resolve(joined(accepted)) : reject(new Error('peer refused'))),
      }
      Bun.connect<PeerClientData>({
        hostname: host,
        port,
        data,
        socket: {
          data: (s, bytes) => {
            const d = s.data
            if (d.answered) return d.other ? forward(d.other, bytes, joined(s)) : s.terminate()
            if (!d.nonce) {
              if (bytes.byteLength < NONCE_BYTES) return d.settle()
              d.nonce = Buffer.from(bytes.subarray(0, NONCE_BYTES))
              s.write(`${tunnelId} ${proof(key, d.nonce, tunnelId)}\n`)
              bytes = bytes.subarray(NONCE_BYTES)
              if (bytes.byteLength === 0) return
            }
            d.answered = true
            if (bytes[0] !== OK) {
              s.end()
              return d.settle()
            }
            // The API server speaks only after the client's TLS hello, which goes out once joined: nothing follows OK yet.
            if (bytes.byteLength > 1) return s.terminate()
            d.settle(s)
          },
          drain: (s) => drainJoined(joined(s)),
          end: (s) => (s.data.answered ? endJoined(joined(s)) : s.data.settle()),
          close: (s) => (s.data.answered ? endJoined(joined(s)) : s.data.settle()),
          error: (s) => (s.data.answered ? endJoined(joined(s)) : s.data.settle()),
          connectError: () => reject(new Error('peer unreachable')),
        },
      }).catch(reject)
    })
  }

  private async listenForPeers() {
    const key = await this.peerKey()
    const listener = Bun.listen<PeerData>({
      hostname: this.deps.config.peerHost,
      port: 0,
      socket: {
        open: (socket) => {
          const nonce = randomBytes(NONCE_BYTES)
          socket.data = { ...newPiped(), nonce: nonce.toString('hex'), line: '', authorized: false }
          socket.write(nonce)
        },
        data: (socket, bytes) => {
          if (socket.data.authorized) return pipeHandlers.data(socket, bytes)
          this.readPeerLine(socket, key, Buffer.from(bytes))
        },
        drain: (socket) => pipeHandlers.drain(socket),
        end: (socket) => pipeHandlers.end(socket),
        close: (socket) => pipeHandlers.close(socket),
        error: (socket) => pipeHandlers.error(socket),
      },
    })
    const host = this.deps.config.peerHost
    return { listener, address: `${host.includes(':') ? `[${host}]` : host}:${listener.port}` }
  }

  /** The peer's first line: a tunnel held here and the proof; then the stream is opened and piped. */
  private readPeerLine(socket: Socket<PeerData>, key: Buffer, bytes: Buffer): void {
    const data = socket.data
    const text = bytes.toString('latin1')
    const end = text.indexOf('\n')
    data.line += end < 0 ? text : text.slice(0, end)
    if (data.line.length > MAX_PEER_LINE) return void socket.terminate()
    if (end < 0) return
    const [tunnelId = '', given = ''] = data.line.split(' ')
    const held = this.tunnels.byId.get(tunnelId)
    const expected = proof(key, Buffer.from(data.nonce, 'hex'), tunnelId)
    if (!held || given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      socket.end(new Uint8Array([REFUSED]))
      return
    }
    data.authorized = true
    const rest = bytes.subarray(end + 1)
    if (rest.byteLength > 0) data.toTunnel = new Uint8Array(rest)
    socket.pause()
    held.tunnel.open().then(
      (stream) => {
        socket.write(new Uint8Array([OK]))
        pipe(socket, stream)
        socket.resume()
      },
      () => socket.end(new Uint8Array([REFUSED])),
    )
  }

  /** The deployment's peer key: made once by the first process that needs it, read by every other. */
  private peerKey(): Promise<Buffer> {
    this.key ??= (async () => {
      const fresh = await this.deps.secrets.seal(randomBytes(32).toString('hex'))
      await this.deps.db.write((tx) => writeFact(tx, PEER_KEY_FACT, fresh, { onlyFirst: true }))
      const sealed = (await readFact(this.deps.db.read, PEER_KEY_FACT)) ?? fresh
      return Buffer.from(await this.deps.secrets.open(sealed), 'hex')
    })()
    return this.key
  }
}

const proof = (key: Buffer, nonce: Buffer, tunnelId: string) => createHmac('sha256', key).update(nonce).update(tunnelId).digest('hex')

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':')
  return [address.slice(0, at).replace(/^\[|\]$/g, ''), Number(address.slice(at + 1))]
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
  }
  return copy
}
