/**
 * Two real Tunnels (a platform and an agent) joined by an in-memory transport that delivers each
 * frame asynchronously, in order, as a WebSocket would. `settle` waits until nothing is in flight.
 */
import { type FrameTransport, Tunnel, type TunnelOptions, type TunnelStream } from '../../src/net/tunnel/mux'

interface Side {
  tunnel: Tunnel
  /** Every frame this side sent, in order. */
  sent: Uint8Array[]
  /** The close code and reason this side's tunnel closed its transport with. */
  closedWith?: { code: number; reason: string }
}

export interface Pair {
  platform: Side
  agent: Side
  clock: { now: number }
  settle(): Promise<void>
}

/** A platform and an agent tunnel; the agent answers opens with `incoming` (accepts by default). */
export function tunnelPair(incoming?: TunnelOptions['incoming']): Pair {
  const clock = { now: 1_000_000 }
  let inFlight = 0
  const sides = {} as { platform: Side; agent: Side }
  const transport = (from: 'platform' | 'agent'): FrameTransport => {
    const to = from === 'platform' ? 'agent' : 'platform'
    return {
      send(frame) {
        const copy = frame.slice()
        sides[from].sent.push(copy)
        inFlight++
        setImmediate(() => {
          inFlight--
          sides[to].tunnel.receive(copy)
        })
        return true
      },
      close(code, reason) {
        sides[from].closedWith = { code, reason }
        inFlight++
        setImmediate(() => {
          inFlight--
          sides[to].tunnel.close(`the peer closed (${code})`, code)
        })
      },
    }
  }
  sides.platform = { tunnel: new Tunnel(transport('platform'), { role: 'platform', now: () => clock.now }), sent: [] }
  sides.agent = {
    tunnel: new Tunnel(transport('agent'), {
      role: 'agent',
      now: () => clock.now,
      incoming: incoming ?? ((_stream, accept) => accept()),
    }),
    sent: [],
  }
  return {
    ...sides,
    clock,
    async settle() {
      for (let quiet = 0; quiet < 3; ) {
        await new Promise((resolve) => setImmediate(resolve))
        quiet = inFlight === 0 ? quiet + 1 : 0
      }
    },
  }
}

/** What a stream's owner heard; `consume` false leaves every byte unconsumed (a reader that stopped). */
export interface Heard {
  bytes: number
  chunks: Uint8Array[]
  ended: boolean
  closed: boolean
  reason: string | undefined
  writable: number
}

export function listen(stream: TunnelStream, consume = true, keep = false): Heard {
  const heard: Heard = { bytes: 0, chunks: [], ended: false, closed: false, reason: undefined, writable: 0 }
  stream.events = {
    data(bytes) {
      heard.bytes += bytes.byteLength
      if (keep) heard.chunks.push(bytes.slice())
      if (consume) stream.consumed(bytes.byteLength)
    },
    end() {
      heard.ended = true
    },
    close(reason) {
      heard.closed = true
      heard.reason = reason
    },
    writable() {
      heard.writable++
    },
  }
  return heard
}

export const text = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks))
