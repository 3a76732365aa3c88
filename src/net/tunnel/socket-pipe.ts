import type { Socket } from 'bun'
import type { TunnelStream } from './mux'

/**
 * Joins a TCP socket and a tunnel stream, with back-pressure both ways: the socket is paused while
 * the stream's window is shut, and the peer is granted credit only for bytes the socket took. What
 * waits in memory is at most one window towards the socket and one socket read towards the tunnel.
 */
export interface Piped {
  stream: TunnelStream | undefined
  /** Bytes read from the socket that the stream's window did not take yet. */
  toTunnel: Uint8Array | undefined
  /** Bytes from the tunnel the socket did not take yet. */
  toSocket: Uint8Array[]
  /** The peer ended: close the socket once toSocket is written. */
  endAfterWrite: boolean
}

export const newPiped = (): Piped => ({ stream: undefined, toTunnel: undefined, toSocket: [], endAfterWrite: false })

/** Starts relaying between `socket` and `stream` (the socket's data field is a Piped made by newPiped). */
export function pipe(socket: Socket<Piped>, stream: TunnelStream): void {
  const piped = socket.data
  piped.stream = stream
  stream.events = {
    data(bytes) {
      if (piped.toSocket.length > 0) return void piped.toSocket.push(bytes.slice())
      const written = Math.max(0, socket.write(bytes))
      if (written < bytes.byteLength) piped.toSocket.push(bytes.slice(written))
      if (written > 0) stream.consumed(written)
    },
    end() {
      piped.endAfterWrite = true
      if (piped.toSocket.length === 0) socket.end()
    },
    close(reason) {
      if (reason) socket.terminate()
      else if (piped.toSocket.length === 0) socket.end()
      else piped.endAfterWrite = true
    },
    writable() {
      if (!piped.toTunnel) return
      const rest = piped.toTunnel
      const taken = stream.write(rest)
      piped.toTunnel = taken < rest.byteLength ? rest.subarray(taken) : undefined
      if (!piped.toTunnel) socket.resume()
    },
  }
  if (piped.toTunnel) stream.events.writable()
}

/** Socket handlers that feed the stream a Piped names (data before the stream exists waits, paused). */
export const pipeHandlers = {
  data(socket: Socket<Piped>, data: Uint8Array) {
    const piped = socket.data
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    if (!piped.stream || piped.toTunnel) {
      piped.toTunnel = piped.toTunnel ? concat(piped.toTunnel, bytes) : bytes.slice()
      socket.pause()
      return
    }
    const taken = piped.stream.write(bytes)
    if (taken < bytes.byteLength) {
      piped.toTunnel = bytes.slice(taken)
      socket.pause()
    }
  },
  drain(socket: Socket<Piped>) {
    const piped = socket.data
    let written = 0
    while (piped.toSocket.length > 0) {
      const next = piped.toSocket[0]
      const n = Math.max(0, socket.write(next))
      written += n
      if (n < next.byteLength) {
        piped.toSocket[0] = next.subarray(n)
        break
      }
      piped.toSocket.shift()
    }
    if (written > 0) piped.stream?.consumed(written)
    if (piped.toSocket.length === 0 && piped.endAfterWrite) socket.end()
  },
  end(socket: Socket<Piped>) {
    socket.data.stream?.end()
  },
  close(socket: Socket<Piped>) {
    const { stream, endAfterWrite } = socket.data
    if (!stream || stream.closed) return
    // After the peer's end this is the clean close of both halves; before it, an abort.
    if (endAfterWrite) stream.end()
    else stream.reset('the connection closed')
  },
  error(socket: Socket<Piped>) {
    socket.data.stream?.reset('connection error')
  },
}

const concat = (a: Uint8Array, b: Uint8Array) => {
  const joined = new Uint8Array(a.byteLength + b.byteLength)
  joined.set(a)
  joined.set(b, a.byteLength)
  return joined
}
