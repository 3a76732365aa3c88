import type { FrameTransport } from './mux'

/** Bun's WebSocket client, which takes headers and TLS options (the DOM typing of the global knows only protocols). */
export const BunWebSocket = WebSocket as unknown as new (url: string, options: Bun.WebSocketOptions) => WebSocket

/** A client WebSocket as a tunnel's transport: a frame sent once it is no longer open is reported dropped (the tunnel closes). */
export const clientTransport = (socket: WebSocket): FrameTransport => ({
  send(frame) {
    if (socket.readyState !== WebSocket.OPEN) return false
    socket.send(frame)
    return true
  },
  close: (code, reason) => socket.close(code, reason),
})
