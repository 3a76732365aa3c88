import { afterAll, describe, expect, test } from 'bun:test'
import net from 'node:net'
import { MAX_RELAY_BUFFER_BYTES } from '../../src/clusters/proxy/service'
import { startEmulator } from '../../src/kube-emulator'
import { makeTestApp } from '../support/app'
import { eventually } from '../support/wait'
import { importAs, importBody, registrationFixture } from './support'

// A relayed session whose one side stops reading: the platform must end it, not hold (or drop) what piles up.
const member = await startEmulator({ tls: true })
afterAll(() => member.stop())
const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
const base = await t.listen()
const [alice] = await t.users('alice')
expect((await importAs(t, alice!, 'alice', importBody(member, 'dev'))).status).toBe(201)

/** Far more than the relay may hold plus what the kernel's socket buffers take. */
const FLOOD_BYTES = MAX_RELAY_BUFFER_BYTES * 5

/** A client WebSocket frame (masked, as RFC 6455 requires of clients) carrying `payload` as binary. */
function clientFrame(payload: Uint8Array): Buffer {
  const length = payload.length
  const head = length < 126 ? Buffer.from([0x82, 0x80 | length]) : Buffer.alloc(length < 65536 ? 4 : 10)
  if (length >= 126 && length < 65536) head.set([0x82, 0x80 | 126, length >> 8, length & 0xff])
  else if (length >= 65536) {
    head.set([0x82, 0x80 | 127])
    head.writeBigUInt64BE(BigInt(length), 2)
  }
  const mask = crypto.getRandomValues(new Uint8Array(4))
  const body = Buffer.from(payload)
  for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3]
  return Buffer.concat([head, mask, body])
}

/** Parses server frames out of `bytes`: the payload bytes of data frames, and the close frame's code and reason if one came. */
function serverFrames(bytes: Buffer): { dataBytes: number; close?: { code: number; reason: string } } {
  let at = 0
  let dataBytes = 0
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at] & 0x0f
    let length = bytes[at + 1] & 0x7f
    let start = at + 2
    if (length === 126) {
      length = bytes.readUInt16BE(at + 2)
      start = at + 4
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(at + 2))
      start = at + 10
    }
    if (start + length > bytes.length) break
    if (opcode === 8)
      return { dataBytes, close: { code: bytes.readUInt16BE(start), reason: bytes.subarray(start + 2, start + length).toString() } }
    if (opcode === 1 || opcode === 2 || opcode === 0) dataBytes += length
    at = start + length
  }
  return { dataBytes }
}

/** Opens a raw WebSocket to the platform as alice (the 101 read); the socket is paused: it reads nothing more until resumed. */
async function rawUpgrade(path: string): Promise<net.Socket> {
  const url = new URL(base)
  const socket = net.connect(Number(url.port), url.hostname)
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: token ${alice!.token}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n',
  )
  const head = await new Promise<string>((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1')
      if (!text.includes('\r\n\r\n')) return
      socket.off('data', onData)
      socket.pause()
      resolve(text)
    }
    socket.on('data', onData)
  })
  expect(head).toStartWith('HTTP/1.1 101')
  return socket
}

describe('a relayed session with a side that stops reading', () => {
  test("a client that sends but never reads (cat echoing its stdin) → the platform ends the session with 1011 once it holds too much, and the member's session ends", async () => {
    const pods = await (
      await fetch(`${member.url}/api/v1/namespaces/demo/pods?labelSelector=app%3Dapi`, {
        headers: { authorization: `Bearer ${member.token}` },
        tls: { ca: member.caCertPem },
      } as RequestInit)
    ).json()
    const pod = pods.items[0].metadata.name
    const socket = await rawUpgrade(
      `/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/pods/${pod}/exec?command=cat&stdin=true&stdout=true`,
    )
    expect(member.sessions()).toBe(1)
    const chunk = new Uint8Array(64 * 1024 + 1)
    // Paced by the platform's reading (and a turn of the event loop each), so the member keeps up and only the echo piles up.
    for (let sent = 0; sent < FLOOD_BYTES && member.sessions() === 1; sent += chunk.length - 1) {
      if (!socket.write(clientFrame(chunk))) await new Promise<void>((resolve) => socket.once('drain', () => resolve()))
      await Bun.sleep(0)
    }
    // The echo piles up at the platform, which gives up on this client and closes the member's side.
    await eventually(() => member.sessions() === 0, 20_000)
    const received: Buffer[] = []
    socket.on('data', (b: Buffer) => received.push(b))
    socket.resume()
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    const { dataBytes, close } = serverFrames(Buffer.concat(received))
    expect(close).toEqual({ code: 1011, reason: `the client fell behind by more than ${MAX_RELAY_BUFFER_BYTES / 1024 / 1024} MiB` })
    expect(dataBytes).toBeLessThan(FLOOD_BYTES)
  }, 30_000)

  test('a member that never reads what the client sends → the platform ends the session with 1011 rather than hold it all', async () => {
    // A "member" that completes the handshake and then reads nothing.
    const silent = net.createServer((socket) => {
      socket.once('data', (request) => {
        const key = /sec-websocket-key: *(\S+)/i.exec(request.toString())![1]
        const accept = new Bun.CryptoHasher('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`,
        )
        socket.pause()
      })
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()))
    afterAll(() => void silent.close())
    const port = (silent.address() as net.AddressInfo).port
    await registrationFixture(t, alice!.user, 'silent', {
      server: `http://127.0.0.1:${port}`,
      caData: '',
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'x' },
    })
    const ws = new WebSocket(
      `${base.replace('http', 'ws')}/api/v1/clusters/alice/silent/k8s/api/v1/namespaces/demo/pods/p/exec?command=cat&stdin=true`,
      {
        headers: { authorization: `token ${alice!.token}` },
        protocols: ['v5.channel.k8s.io'],
      } as unknown as string[],
    )
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })
    })
    await new Promise<void>((resolve) => {
      ws.onopen = () => resolve()
    })
    const chunk = new Uint8Array(64 * 1024)
    for (let sent = 0; sent < FLOOD_BYTES && ws.readyState === WebSocket.OPEN; sent += chunk.length) ws.send(chunk)
    expect(await closed).toEqual({ code: 1011, reason: `the cluster fell behind by more than ${MAX_RELAY_BUFFER_BYTES / 1024 / 1024} MiB` })
  }, 30_000)
})
