/**
 * A hostile agent at the real door: it holds a valid agent token, says a valid hello, is welcomed,
 * then breaks the tunnel protocol. The platform closes that tunnel (1002, or 1003 for text), keeps
 * serving, and the cluster shows no agent connected again.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { BunWebSocket } from '../../src/net/tunnel/client-socket'
import { encode, encodeText, Frame } from '../../src/net/tunnel/frames'
import { agentLab, edgeStatus, untilAgent } from './agent-lab'

const lab = await agentLab()
const uid = crypto.randomUUID()

/** Connects as edge's agent, says hello and waits for the welcome. */
async function welcomedSocket(): Promise<{ socket: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new BunWebSocket(`${lab.base.replace(/^https/, 'wss')}/api/v1/agent/connect`, {
    headers: { authorization: `Bearer ${lab.token}` },
    tls: { ca: readFileSync(lab.caFile, 'utf8') },
  })
  socket.binaryType = 'arraybuffer'
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.addEventListener('close', (event) => resolve({ code: event.code, reason: event.reason })),
  )
  const welcomed = new Promise<void>((resolve, reject) => {
    socket.addEventListener('message', (event) => {
      const type = new Uint8Array(event.data as ArrayBuffer)[0]
      if (type === Frame.welcome) resolve()
    })
    closed.then((c) => reject(new Error(`closed before the welcome: ${c.code} ${c.reason}`)))
  })
  socket.addEventListener('open', () => {
    const hello = {
      agentVersion: 'hostile',
      uid,
      kubernetesVersion: 'v1.31.0',
      nodeCount: 1,
      server: lab.member.url,
      caData: lab.member.caCertPem ?? '',
      tlsServerName: '',
      credential: { token: lab.member.token },
    }
    socket.send(encodeText(Frame.hello, 0, JSON.stringify(hello)))
  })
  await welcomed
  return { socket, closed }
}

const cases: [string, (socket: WebSocket) => void, number][] = [
  ['a message shorter than a frame header', (s) => s.send(new Uint8Array([4, 0])), 1002],
  ['an open from the agent', (s) => s.send(encode(Frame.open, 1)), 1002],
  [
    'data for a stream the platform never opened, then a ping of 64 KiB',
    (s) => {
      s.send(encode(Frame.data, 7, new Uint8Array(100)))
      s.send(encode(Frame.ping, 0, new Uint8Array(64 * 1024)))
    },
    1002,
  ],
  ['a second hello', (s) => s.send(encodeText(Frame.hello, 0, '{}')), 1002],
  ['a text message', (s) => s.send('{"hello": true}'), 1003],
]

for (const [name, misbehave, code] of cases)
  test(`a welcomed agent that sends ${name} loses its tunnel; the platform keeps serving`, async () => {
    const { socket, closed } = await welcomedSocket()
    await untilAgent(lab, true)
    misbehave(socket)
    expect((await closed).code).toBe(code)
    const version = await fetch(`${lab.base}/api/v1/version`, {
      headers: { authorization: `Bearer ${lab.alice.token}` },
      tls: { ca: readFileSync(lab.caFile, 'utf8') },
    } as RequestInit)
    expect(version.status).toBe(200)
    await untilAgent(lab, false)
    expect((await edgeStatus(lab)).agent?.connected).toBe(false)
  })
