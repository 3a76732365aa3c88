import type { Socket } from 'bun'

/**
 * Two TCP sockets joined end to end (a relay connection and a connection to the process holding
 * the tunnel), with back-pressure: what one socket does not take waits in its backlog and the other
 * is paused until it drains, so at most one read waits per direction.
 */
export interface Joined {
  other: Socket<Joined> | undefined
  /** Bytes for this socket that it did not take yet. */
  backlog: Uint8Array[]
  /** End this socket once the backlog is written. */
  ending: boolean
}

export const newJoined = (): Joined => ({ other: undefined, backlog: [], ending: false })

/** Joins `a` and `b`; `early` (bytes `a` sent before) goes to `b` first. */
export function joinSockets(a: Socket<Joined>, b: Socket<Joined>, early?: Uint8Array): void {
  a.data.other = b
  b.data.other = a
  if (early) forward(b, early, a)
}

/** Writes `bytes` (read from `from`) to `to`; the rest waits in `to`'s backlog while `from` pauses. */
export function forward(to: Socket<Joined>, bytes: Uint8Array, from: Socket<Joined>): void {
  let rest = bytes
  if (to.data.backlog.length === 0) {
    const written = Math.max(0, to.write(bytes))
    if (written === bytes.byteLength) return
    rest = bytes.subarray(written)
  }
  to.data.backlog.push(rest.slice())
  from.pause()
}

/** `socket` can take more: its backlog goes out, then the other side reads again. */
export function drainJoined(socket: Socket<Joined>): void {
  const backlog = socket.data.backlog
  while (backlog.length > 0) {
    const next = backlog[0]!
    const written = Math.max(0, socket.write(next))
    if (written < next.byteLength) {
      backlog[0] = next.subarray(written)
      return
    }
    backlog.shift()
  }
  socket.data.other?.resume()
  if (socket.data.ending) socket.end()
}

/** `socket` ended or closed: the other ends once its backlog is written. */
export function endJoined(socket: Socket<Joined>): void {
  const other = socket.data.other
  if (!other) return
  socket.data.other = undefined
  other.data.other = undefined
  if (other.data.backlog.length > 0) other.data.ending = true
  else other.end()
}
