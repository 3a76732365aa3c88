import { afterAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { Socket } from 'bun'
import { UnsafeRequest } from '../../src/net/http1/request'
import { type ClientWebSocket, MAX_MESSAGE_BYTES, NotUpgraded, openWebSocket } from '../../src/net/websocket'
import { eventually } from '../support/wait'

// Our WebSocket client against a raw TCP server that writes the handshake answer and the frames
// byte by byte, so each rule of RFC 6455 the client must keep can be checked on the wire.

interface Peer {
  /** The handshake request's head as the server read it. */
  head: string
  /** Frames the client sent, unmasked, with whether each was masked. */
  frames: { fin: boolean; opcode: number; masked: boolean; payload: Buffer }[]
  socket: Socket<undefined>
}

const accept = (head: string) =>
  createHash('sha1')
    .update(`${/sec-websocket-key: (\S+)/i.exec(head)![1]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64')

/** A server frame: unmasked, `fin` set unless said otherwise. */
function frame(opcode: number, payload: Buffer | string, fin = true): Buffer {
  const body = Buffer.from(payload)
  const head =
    body.length < 126
      ? Buffer.from([(fin ? 0x80 : 0) | opcode, body.length])
      : Buffer.from([(fin ? 0x80 : 0) | opcode, 126, body.length >> 8, body.length & 0xff])
  return Buffer.concat([head, body])
}

function readClientFrames(bytes: Buffer, into: Peer['frames']): Buffer {
  let rest = bytes
  while (rest.length >= 6) {
    let length = rest[1]! & 0x7f
    let offset = 2
    if (length === 126) {
      length = rest.readUInt16BE(2)
      offset = 4
    }
    const masked = (rest[1]! & 0x80) !== 0
    if (rest.length < offset + 4 + length) break
    const mask = rest.subarray(offset, offset + 4)
    const payload = Buffer.from(rest.subarray(offset + 4, offset + 4 + length).map((b, i) => b ^ mask[i & 3]!))
    into.push({ fin: (rest[0]! & 0x80) !== 0, opcode: rest[0]! & 0x0f, masked, payload })
    rest = rest.subarray(offset + 4 + length)
  }
  return rest
}

/** A server answering each handshake with `answer(head)` (the status line and headers, or a full answer when it returns one ending in a blank line). */
function server(answer: (head: string) => string) {
  const peers: Peer[] = []
  const listener = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, data) {
        let peer = peers.find((p) => p.socket === socket)
        if (!peer) {
          const text = Buffer.from(data).toString('latin1')
          peer = { head: text.slice(0, text.indexOf('\r\n\r\n')), frames: [], socket }
          peers.push(peer)
          socket.write(answer(peer.head))
          return
        }
        readClientFrames(Buffer.from(data), peer.frames)
      },
    },
  })
  afterAll(() => listener.stop(true))
  return { peers, port: listener.port }
}

const switching = (protocol?: string) => (head: string) =>
  `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept(head)}\r\n${protocol ? `sec-websocket-protocol: ${protocol}\r\n` : ''}\r\n`

const open = (port: number, headers: Record<string, string | string[]> = {}, protocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io']) =>
  openWebSocket(
    {
      dialed: { address: '127.0.0.1', port },
      tls: undefined,
      hostHeader: 'member.example:6443',
      path: '/api/v1/namespaces/demo/pods/p/exec?command=sh',
      headers,
      authorization: 'Bearer member-token',
      protocols,
    },
    () => {},
  )

function messages(ws: ClientWebSocket): (string | ArrayBuffer)[] {
  const got: (string | ArrayBuffer)[] = []
  ws.addEventListener('message', (event) => got.push(event.data))
  return got
}

describe('the handshake', () => {
  const member = server(switching('v4.channel.k8s.io'))

  test('each value of a repeated header is its own line; the credential, key, version and protocols are sent; the chosen protocol is kept', async () => {
    const ws = await open(member.port, { 'impersonate-user': 'bob', 'impersonate-group': ['platform:org:acme', 'platform:team:acme:ops'] })
    const head = member.peers.at(-1)!.head
    expect(head).toStartWith('GET /api/v1/namespaces/demo/pods/p/exec?command=sh HTTP/1.1\r\nhost: member.example:6443\r\n')
    expect(head.split('\r\n').filter((line) => line.startsWith('impersonate-group:'))).toEqual([
      'impersonate-group: platform:org:acme',
      'impersonate-group: platform:team:acme:ops',
    ])
    expect(head).toContain('\r\nauthorization: Bearer member-token\r\n')
    expect(head).toContain('\r\nupgrade: websocket\r\n')
    expect(head).toEndWith('\r\nconnection: Upgrade')
    expect(head).toContain('\r\nsec-websocket-version: 13\r\n')
    expect(head).toContain('\r\nsec-websocket-protocol: v5.channel.k8s.io, v4.channel.k8s.io\r\n')
    expect(ws.protocol).toBe('v4.channel.k8s.io')
    ws.close()
  })

  test('a header value with a line break is never written', async () => {
    const before = member.peers.length
    expect(() => open(member.port, { 'impersonate-group': ['a', 'b\r\nimpersonate-user: admin'] })).toThrow(UnsafeRequest)
    expect(member.peers.length).toBe(before)
  })

  test('an answer other than 101, a wrong accept, a protocol not offered: NotUpgraded', async () => {
    const refusing = server(() => 'HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n')
    await expect(open(refusing.port)).rejects.toBeInstanceOf(NotUpgraded)
    const wrongAccept = server(() => 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nsec-websocket-accept: nope\r\n\r\n')
    await expect(open(wrongAccept.port)).rejects.toBeInstanceOf(NotUpgraded)
    const otherProtocol = server(switching('channel.k8s.io'))
    await expect(open(otherProtocol.port)).rejects.toBeInstanceOf(NotUpgraded)
  })
})

describe('frames', () => {
  const member = server(switching())

  test('client frames are masked; text and binary messages arrive as string and ArrayBuffer; fragments are joined', async () => {
    const ws = await open(member.port)
    const peer = member.peers.at(-1)!
    const got = messages(ws)
    ws.send('hello')
    ws.send(new Uint8Array([1, 2, 3]))
    await eventually(() => peer.frames.length === 2)
    expect(peer.frames.map((f) => [f.masked, f.fin, f.opcode, [...f.payload]])).toEqual([
      [true, true, 1, [...Buffer.from('hello')]],
      [true, true, 2, [1, 2, 3]],
    ])
    peer.socket.write(Buffer.concat([frame(1, 'ab', false), frame(9, 'ping!'), frame(0, 'cd', false), frame(0, 'ef')]))
    peer.socket.write(frame(2, Buffer.from([9, 8])))
    await eventually(() => got.length === 2)
    expect(got[0]).toBe('abcdef')
    expect([...new Uint8Array(got[1] as ArrayBuffer)]).toEqual([9, 8])
    // The ping between the fragments was answered with its payload.
    await eventually(() => peer.frames.length === 3)
    expect(peer.frames[2]!.opcode).toBe(10)
    expect(peer.frames[2]!.payload.toString()).toBe('ping!')
    ws.close()
  })

  test("the close handshake: the member's close frame is answered and ends the socket with its code and reason", async () => {
    const ws = await open(member.port)
    const peer = member.peers.at(-1)!
    const closed: { code: number; reason: string }[] = []
    ws.addEventListener('close', (event) => closed.push(event))
    const payload = Buffer.alloc(2 + 4)
    payload.writeUInt16BE(4000)
    payload.write('done', 2)
    peer.socket.write(frame(8, payload))
    await eventually(() => closed.length === 1)
    expect(closed).toEqual([{ code: 4000, reason: 'done' }])
    await eventually(() => peer.frames.length === 1)
    expect(peer.frames[0]!.opcode).toBe(8)
    expect(peer.frames[0]!.payload.readUInt16BE(0)).toBe(4000)
  })

  test('our close sends a close frame with the code and reason', async () => {
    const ws = await open(member.port)
    const peer = member.peers.at(-1)!
    ws.close(1011, 'too slow')
    await eventually(() => peer.frames.length === 1)
    expect(peer.frames[0]!.opcode).toBe(8)
    expect(peer.frames[0]!.payload.readUInt16BE(0)).toBe(1011)
    expect(peer.frames[0]!.payload.subarray(2).toString()).toBe('too slow')
  })

  test('a frame larger than MAX_MESSAGE_BYTES ends the session with 1009 before its payload is read', async () => {
    const ws = await open(member.port)
    const peer = member.peers.at(-1)!
    const closed: number[] = []
    ws.addEventListener('close', (event) => closed.push(event.code))
    const head = Buffer.alloc(10)
    head[0] = 0x82
    head[1] = 127
    head.writeBigUInt64BE(BigInt(MAX_MESSAGE_BYTES + 1), 2)
    peer.socket.write(head)
    await eventually(() => closed.length === 1)
    expect(closed).toEqual([1009])
  })

  test('a masked server frame is a protocol error (1002)', async () => {
    const ws = await open(member.port)
    const peer = member.peers.at(-1)!
    const closed: number[] = []
    ws.addEventListener('close', (event) => closed.push(event.code))
    peer.socket.write(Buffer.from([0x81, 0x81, 1, 2, 3, 4, 5]))
    await eventually(() => closed.length === 1)
    expect(closed).toEqual([1002])
  })
})
