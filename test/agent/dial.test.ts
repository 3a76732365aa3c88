import { expect, test } from 'bun:test'
import { dialApiServer } from '../../src/agent/run'
import { encode, Frame } from '../../src/net/tunnel/frames'
import { OpenRefused } from '../../src/net/tunnel/mux'
import { tunnelPair } from '../net/tunnel-pair'

test('a stream the platform reset while the agent was still dialling: the connection to the API server is closed, not left open', async () => {
  let closed!: () => void
  const apiServerConnectionClosed = new Promise<void>((resolve) => {
    closed = resolve
  })
  let connections = 0
  // The "API server": a listener that only counts connections and hears them close.
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open() {
        connections++
      },
      data() {},
      close() {
        closed()
      },
    },
  })
  const target = {
    server: `https://127.0.0.1:${listener.port}`,
    caData: '',
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: 't' },
  }
  const pair = tunnelPair((stream, accept, refuse) => {
    dialApiServer(target, stream, accept, refuse)
    // The platform gave up (its open timed out) before the dial completed: its RESET arrives now.
    pair.agent.tunnel.receive(encode(Frame.reset, stream.id))
  })
  const opening = pair.platform.tunnel.open()
  opening.catch(() => {})
  await apiServerConnectionClosed
  expect(connections).toBe(1)
  expect(pair.agent.tunnel.streamCount).toBe(0)
  // The agent never answered the open it had forgotten.
  pair.clock.now += 10_000
  pair.platform.tunnel.tick(pair.clock.now)
  expect(opening).rejects.toBeInstanceOf(OpenRefused)
  listener.stop(true)
})
