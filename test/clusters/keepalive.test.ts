import { afterAll, describe, expect, test } from 'bun:test'
import type { Socket } from 'bun'
import type { ClusterConnection } from '../../src/clusters/connection'
import { callMember } from '../../src/clusters/member/client'
import { MemberMessages } from '../../src/clusters/member/failures'
import { AppError } from '../../src/errors'
import { startEmulator } from '../../src/kube-emulator'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { MAX_HEAD_BYTES } from '../../src/net/http1/parser'
import { CALLER_SHARE, IDLE_CLOSE_MS, MAX_CONNECTIONS_PER_ORIGIN as MAX_CONNECTIONS_PER_CLUSTER } from '../../src/net/http1/pool'
import type { RequestHeaders } from '../../src/net/http1/request'
import { makeTestApp } from '../support/app'
import { eventually } from '../support/wait'
import { hostile } from './support'

// The member client's kept-alive pool against the real emulator over TLS, and against a hostile
// TLS server that answers with raw bytes, so every framing the client must refuse or survive can be sent.

const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })

const emulator = await startEmulator({ tls: true, seed: false })
afterAll(() => emulator.stop())
const viaEmulator: ClusterConnection = {
  server: emulator.url,
  caData: emulator.caCertPem!,
  tlsServerName: '',
  insecureSkipTlsVerify: false,
  credential: { token: emulator.token },
}

const get = (
  connection: ClusterConnection,
  path: string,
  init: {
    method?: string
    body?: string
    timeoutMs?: number
    headers?: RequestHeaders
    signal?: AbortSignal
    caller?: string
  } = {},
) =>
  callMember(
    t.deps,
    { name: 'member', connection },
    {
      method: init.method ?? 'GET',
      path,
      headers: init.headers ?? { accept: 'application/json' },
      body: init.body === undefined ? null : new TextEncoder().encode(init.body),
      timeoutMs: init.timeoutMs ?? 5_000,
      signal: init.signal,
      caller: init.caller,
    },
  )
const text = (body: Uint8Array) => new TextDecoder().decode(body)
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).kind).toBe('upstream')
      return (error as AppError).message
    },
  )

describe('against the emulator over TLS', () => {
  test('GET an object → the exact bytes and headers a direct fetch gets; a create (POST with a body) → 201', async () => {
    const created = await get(viaEmulator, '/api/v1/namespaces', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'keepalive' } }),
      headers: { 'content-type': 'application/json' },
    })
    expect(created.status).toBe(201)
    const answer = await get(viaEmulator, '/api/v1/namespaces/keepalive')
    const direct = await fetch(`${emulator.url}/api/v1/namespaces/keepalive`, {
      headers: { authorization: `Bearer ${emulator.token}` },
      tls: { ca: emulator.caCertPem },
    } as RequestInit)
    expect(answer.status).toBe(200)
    expect(text(answer.body)).toBe(await direct.text())
    expect(answer.headers['content-type']).toBe('application/json')
  })

  test("the member's own refusal (404 Status) comes back as it is", async () => {
    const answer = await get(viaEmulator, '/api/v1/namespaces/keepalive/configmaps/nope')
    expect(answer.status).toBe(404)
    expect(JSON.parse(text(answer.body))).toMatchObject({ kind: 'Status', code: 404 })
  })

  test('a certificate the configured CA did not sign → upstream naming the TLS failure; a wrong tlsServerName → upstream', async () => {
    const other = await generateServerTls(['127.0.0.1'])
    expect(await failure(get({ ...viaEmulator, caData: other.caCertPem }, '/version'))).toBe(
      'cluster "member" presented a TLS certificate that the configured certificate authority did not sign',
    )
    expect(await failure(get({ ...viaEmulator, caData: '' }, '/version'))).toBe(
      'cluster "member" presented a TLS certificate that the configured certificate authority did not sign',
    )
    expect(await failure(get({ ...viaEmulator, tlsServerName: 'not-the-emulator.example' }, '/version'))).toBe(
      'cluster "member" presented a TLS certificate for another name (set tlsServerName to the name it was issued for)',
    )
  })

  test("a member that wants a client certificate → answers with the registration's certificate; with a token instead → upstream naming the handshake", async () => {
    const mutual = await startEmulator({ tls: true, seed: false, clientCertificates: true })
    try {
      const withCertificate: ClusterConnection = {
        server: mutual.url,
        caData: mutual.caCertPem!,
        tlsServerName: '',
        insecureSkipTlsVerify: false,
        credential: { clientCertificate: mutual.clientCertPem!, clientKey: mutual.clientKeyPem! },
      }
      expect((await get(withCertificate, '/api/v1/namespaces')).status).toBe(200)
      expect(await failure(get({ ...withCertificate, credential: { token: 'not-a-certificate' } }, '/api/v1/namespaces'))).toBe(
        'cluster "member" broke off the TLS handshake (does it want a client certificate, or is it not TLS?)',
      )
    } finally {
      await mutual.stop()
    }
  })

  test('insecure-skip-tls-verify (no CA) → the member answers', async () => {
    const answer = await get({ ...viaEmulator, caData: '', insecureSkipTlsVerify: true }, '/version')
    expect(answer.status).toBe(200)
  })
})

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`

describe('against a hostile TLS server', () => {
  test('one connection serves request after request; the head carries Host, the headers given and the credential, nothing else', async () => {
    const server = await hostile((path, id, socket) => {
      socket.write(ok(`{"path":"${path}","connection":${id}}`))
    })
    try {
      for (let i = 0; i < 5; i++)
        expect(JSON.parse(text((await get(server.connection, `/api/v1/n${i}`)).body))).toEqual({ path: `/api/v1/n${i}`, connection: 1 })
      expect(server.connections).toBe(1)
      expect(server.requests[0]).toBe(
        `GET /api/v1/n0 HTTP/1.1\r\nhost: ${server.url.slice('https://'.length)}\r\naccept: application/json\r\nauthorization: Bearer member-token`,
      )
    } finally {
      server.stop()
    }
  })

  test('an answer sent a byte at a time, and a chunked answer with split chunks, extensions and trailers → the whole body', async () => {
    const server = await hostile(async (path, _id, socket) => {
      const raw =
        path === '/bytes'
          ? ok('{"split":true}')
          : 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4;ext=1\r\n{"a"\r\nB\r\n:"chunked"}\r\n0\r\nx-trailer: t\r\n\r\n'
      for (const char of raw) {
        socket.write(char)
        socket.flush()
        // A turn of the event loop per byte, so each reaches the parser as its own read (the behaviour under test).
        await Bun.sleep(0)
      }
    })
    try {
      expect(text((await get(server.connection, '/bytes')).body)).toBe('{"split":true}')
      expect(text((await get(server.connection, '/chunked')).body)).toBe('{"a":"chunked"}')
      expect(server.connections).toBe(1)
    } finally {
      server.stop()
    }
  })

  test('a 3 MiB body with its Content-Length, sent in pieces → byte for byte; the connection is kept', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 'abcdefghij')
    const server = await hostile(async (path, _id, socket) => {
      if (path !== '/big') return void socket.write(ok('{}'))
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n`)
      for (let at = 0; at < big.length; at += 256 * 1024) {
        socket.write(big.subarray(at, at + 256 * 1024))
        // Pieces apart in time, so the body arrives over several reads (the behaviour under test).
        await Bun.sleep(1)
      }
    })
    try {
      const answer = await get(server.connection, '/big')
      expect(Buffer.from(answer.body).equals(big)).toBe(true)
      expect((await get(server.connection, '/next')).status).toBe(200)
      expect(server.connections).toBe(1)
    } finally {
      server.stop()
    }
  })

  test('304, 204 and HEAD answers carry no body whatever their Content-Length says: the connection is reused for the next answer', async () => {
    const server = await hostile((path, _id, socket) => {
      if (path === '/304') socket.write('HTTP/1.1 304 Not Modified\r\netag: "x"\r\ncontent-length: 42\r\n\r\n')
      else if (path === '/204') socket.write('HTTP/1.1 204 No Content\r\n\r\n')
      else if (path === '/head') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n')
      else socket.write(ok('{"next":true}'))
    })
    try {
      const notModified = await get(server.connection, '/304')
      expect([notModified.status, notModified.body.length, notModified.headers.etag]).toEqual([304, 0, '"x"'])
      expect((await get(server.connection, '/204')).status).toBe(204)
      const head = await get(server.connection, '/head', { method: 'HEAD' })
      expect([head.status, head.body.length]).toEqual([200, 0])
      expect(text((await get(server.connection, '/next')).body)).toBe('{"next":true}')
      expect(server.connections).toBe(1)
    } finally {
      server.stop()
    }
  })

  test('bytes beyond the framed answer (a smuggled second answer, a 204 with a body) → that connection is closed; the next request never sees them', async () => {
    const server = await hostile((path, _id, socket) => {
      if (path === '/smuggle') socket.write(ok('{"first":true}') + ok('{"smuggled":true}'))
      else if (path === '/204')
        socket.write('HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 17\r\n\r\n{"smuggled":true}')
      else socket.write(ok('{"honest":true}'))
    })
    try {
      expect(text((await get(server.connection, '/smuggle')).body)).toBe('{"first":true}')
      expect(text((await get(server.connection, '/next')).body)).toBe('{"honest":true}')
      expect((await get(server.connection, '/204')).status).toBe(204)
      expect(text((await get(server.connection, '/next')).body)).toBe('{"honest":true}')
      expect(server.connections).toBe(3)
    } finally {
      server.stop()
    }
  })

  test('doubtful framing → 502 naming what is wrong, and the connection is not reused', async () => {
    const answers: Record<string, string> = {
      '/both': 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      '/two-lengths': 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}',
      '/bad-length': 'HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\n{}',
      '/gzip-te': 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
      '/bad-chunk': 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      '/long-chunk': 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{}\r\n0\r\n\r\n',
      '/bare-lf': 'HTTP/1.1 200 OK\nx-a: b\r\ncontent-length: 2\r\n\r\n{}',
      '/status': 'HTTP/2 200 OK\r\ncontent-length: 2\r\n\r\n{}',
      '/header': 'HTTP/1.1 200 OK\r\nbad header: x\r\ncontent-length: 2\r\n\r\n{}',
      '/folded': 'HTTP/1.1 200 OK\r\nx-a: b\r\n c\r\ncontent-length: 2\r\n\r\n{}',
      '/switching': 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n',
    }
    const server = await hostile((path, _id, socket) => {
      socket.write(answers[path] ?? ok('{}'))
    })
    try {
      const why: Record<string, string> = {}
      for (const path of Object.keys(answers)) why[path] = await failure(get(server.connection, path))
      for (const message of Object.values(why)) expect(message).toStartWith('cluster "member" answered with a malformed HTTP response')
      expect(why['/both']).toContain('both Transfer-Encoding and Content-Length')
      expect(why['/bare-lf']).toContain('bare CR or LF')
      expect(server.connections).toBe(Object.keys(answers).length)
      expect((await get(server.connection, '/fine')).status).toBe(200)
    } finally {
      server.stop()
    }
  })

  test(`a head larger than ${MAX_HEAD_BYTES} bytes → 502, without waiting for its end`, async () => {
    const server = await hostile((_path, _id, socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(MAX_HEAD_BYTES)}`)
    })
    try {
      expect(await failure(get(server.connection, '/big'))).toContain(`response head larger than ${MAX_HEAD_BYTES} bytes`)
    } finally {
      server.stop()
    }
  })

  test('a connection closed in the middle of the body → 502; a body delimited by the close → the body, and the connection is not kept', async () => {
    const server = await hostile((path, _id, socket) => {
      if (path === '/cut') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"partial"')
      else if (path === '/cut-chunked') socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\n{"part')
      else socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"until":"close"}')
      socket.end()
    })
    try {
      expect(await failure(get(server.connection, '/cut'))).toContain('the connection closed before the answer was complete')
      expect(await failure(get(server.connection, '/cut-chunked'))).toContain('the connection closed before the answer was complete')
      expect(text((await get(server.connection, '/close-delimited')).body)).toBe('{"until":"close"}')
      expect(text((await get(server.connection, '/close-delimited')).body)).toBe('{"until":"close"}')
      expect(server.connections).toBe(4)
    } finally {
      server.stop()
    }
  })

  test('the server closes a kept connection before answering → a GET goes again on a new connection; a POST is not repeated (502)', async () => {
    const served = new Map<number, number>()
    const server = await hostile((_path, id, socket) => {
      // The second request on each connection finds it closed, as after a server's idle timeout.
      served.set(id, (served.get(id) ?? 0) + 1)
      if (served.get(id)! > 1) return void socket.end()
      socket.write(ok(`{"connection":${id}}`))
    })
    try {
      await get(server.connection, '/first')
      expect(JSON.parse(text((await get(server.connection, '/again')).body))).toEqual({ connection: 2 })
      const posts = server.requests.length
      expect(await failure(get(server.connection, '/create', { method: 'POST', body: '{}' }))).toBe(
        'cluster "member" closed the connection',
      )
      expect(server.requests.length - posts).toBe(1)
    } finally {
      server.stop()
    }
  })

  test('a member that never answers → "did not answer in time" at the deadline, and the connection is dropped', async () => {
    const server = await hostile(() => undefined)
    try {
      const started = performance.now()
      expect(await failure(get(server.connection, '/silent', { timeoutMs: 300 }))).toBe('cluster "member" did not answer in time')
      expect(performance.now() - started).toBeLessThan(1500)
    } finally {
      server.stop()
    }
  })

  test('the client leaves before the member answers → the call ends within a sweep (clientClosed), and the member sees its connection closed', async () => {
    const server = await hostile(() => undefined)
    try {
      const leaving = new AbortController()
      const started = performance.now()
      const call = get(server.connection, '/slow-list', { timeoutMs: 10_000, signal: leaving.signal })
      await eventually(() => server.requests.length === 1)
      leaving.abort()
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).kind).toBe('clientClosed')
      expect(performance.now() - started).toBeLessThan(2_000)
      await eventually(() => server.closed.includes(1))
    } finally {
      server.stop()
    }
  })

  test('a client that leaves while its request waits for a connection: once one comes free the request is dropped unwritten, and the connections serve the others', async () => {
    const held: Socket<{ id: number; buffered: string }>[] = []
    const server = await hostile((path, id, socket) => {
      if (path.startsWith('/hold')) held.push(socket)
      else socket.write(ok(`{"connection":${id}}`))
    })
    try {
      // Two callers: one holds at most its share of the connections.
      const holding = Array.from({ length: MAX_CONNECTIONS_PER_CLUSTER }, (_, i) =>
        get(server.connection, `/hold-${i}`, { caller: `c${i % 2}` }),
      )
      await eventually(() => held.length === MAX_CONNECTIONS_PER_CLUSTER)
      const leaving = new AbortController()
      const late = get(server.connection, '/late', { signal: leaving.signal })
      leaving.abort()
      for (const socket of held) socket.write(ok('{}'))
      expect((await Promise.all(holding)).every((a) => a.status === 200)).toBe(true)
      expect(
        await late.then(
          () => undefined,
          (e: unknown) => (e as AppError).kind,
        ),
      ).toBe('clientClosed')
      expect((await get(server.connection, '/after')).status).toBe(200)
      expect(server.requests.some((head) => head.startsWith('GET /late '))).toBe(false)
      expect(server.connections).toBe(MAX_CONNECTIONS_PER_CLUSTER)
    } finally {
      server.stop()
    }
  })

  test(`${MAX_CONNECTIONS_PER_CLUSTER + 8} requests at once → at most ${MAX_CONNECTIONS_PER_CLUSTER} connections, every request answered`, async () => {
    const held: (() => void)[] = []
    const server = await hostile((_path, id, socket) => {
      const answer = () => socket.write(ok(`{"connection":${id}}`))
      if (held.length === MAX_CONNECTIONS_PER_CLUSTER) return void answer()
      // Each answer waits until every connection is busy at once: the other 8 requests wait for one of these.
      held.push(answer)
      if (held.length === MAX_CONNECTIONS_PER_CLUSTER) for (const each of held) each()
    })
    try {
      const answers = await Promise.all(
        Array.from({ length: MAX_CONNECTIONS_PER_CLUSTER + 8 }, (_, i) => get(server.connection, `/n${i}`, { caller: `c${i % 2}` })),
      )
      expect(answers.every((a) => a.status === 200)).toBe(true)
      expect(server.connections).toBe(MAX_CONNECTIONS_PER_CLUSTER)
    } finally {
      server.stop()
    }
  })

  test(`one caller's slow calls hold at most ${CALLER_SHARE} connections: another caller's call is answered while they are all still held`, async () => {
    const held: (() => void)[] = []
    const server = await hostile((path, id, socket) => {
      const answer = () => socket.write(ok(`{"connection":${id}}`))
      if (path.startsWith('/slow')) held.push(answer)
      else answer()
    })
    try {
      const slow = Array.from({ length: MAX_CONNECTIONS_PER_CLUSTER + 8 }, (_, i) =>
        get(server.connection, `/slow-${i}`, { caller: 'alice' }),
      )
      await eventually(() => held.length === CALLER_SHARE)
      const other = await get(server.connection, '/quick', { caller: 'bob' })
      expect(other.status).toBe(200)
      // Bob was answered while every one of alice's calls on the wire still waited, and she got no more than her share.
      expect(held).toHaveLength(CALLER_SHARE)
      // Her other calls go out as hers come back.
      while (held.length > 0) held.shift()!()
      await eventually(() => {
        while (held.length > 0) held.shift()!()
        return server.requests.filter((head) => head.startsWith('GET /slow')).length === MAX_CONNECTIONS_PER_CLUSTER + 8
      })
      expect((await Promise.all(slow)).every((a) => a.status === 200)).toBe(true)
    } finally {
      server.stop()
    }
  })

  test(`an idle connection is closed after ${IDLE_CLOSE_MS} ms; the next request opens a new one`, async () => {
    const server = await hostile((_path, id, socket) => {
      socket.write(ok(`{"connection":${id}}`))
    })
    try {
      await get(server.connection, '/a')
      t.clock.advance(IDLE_CLOSE_MS)
      await eventually(() => server.closed.includes(1))
      expect(JSON.parse(text((await get(server.connection, '/b')).body))).toEqual({ connection: 2 })
    } finally {
      server.stop()
    }
  })

  test('a header with several values goes as one line per value (Kubernetes reads each Impersonate-Group line as one group)', async () => {
    const server = await hostile((_path, _id, socket) => {
      socket.write(ok('{}'))
    })
    try {
      const answer = await get(server.connection, '/x', {
        headers: { 'impersonate-group': ['platform:org:acme', 'platform:team:acme:ops'] },
      })
      expect(answer.status).toBe(200)
      const lines = server.requests[0]!.split('\r\n').filter((line) => line.startsWith('impersonate-group:'))
      expect(lines).toEqual(['impersonate-group: platform:org:acme', 'impersonate-group: platform:team:acme:ops'])
      const refused = await get(server.connection, '/x', { headers: { 'impersonate-group': ['a', 'b\r\nimpersonate-user: admin'] } }).catch(
        (e: unknown) => e,
      )
      expect((refused as AppError).kind).toBe('invalid')
      expect(server.requests).toHaveLength(1)
    } finally {
      server.stop()
    }
  })

  test('a header or path with a line break is never written: invalid', async () => {
    const server = await hostile((_path, _id, socket) => {
      socket.write(ok('{}'))
    })
    try {
      const refused = await get(server.connection, '/x', { headers: { 'x-a': 'b\r\nimpersonate-user: admin' } }).catch((e: unknown) => e)
      expect((refused as AppError).kind).toBe('invalid')
      const badPath = await get(server.connection, '/x HTTP/1.1\r\nx: y').catch((e: unknown) => e)
      expect((badPath as AppError).kind).toBe('invalid')
      expect(server.requests).toEqual([])
    } finally {
      server.stop()
    }
  })
})

const MiB = 1024 * 1024
// A budget of 8 MiB for the process: 2 MiB for one caller.
const small = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true', PLATFORM_MEMBER_BUFFER_BYTES: String(8 * MiB) })

describe('answers larger than what may be buffered', () => {
  const plainMember = (server: string) => ({
    name: 'member',
    connection: { server, caData: '', tlsServerName: '', insecureSkipTlsVerify: false, credential: { token: 't' } },
  })
  /** A call that needs the answer whole. */
  const call = (server: string, path: string, caller?: string) =>
    callMember(small.deps, plainMember(server), { path, timeoutMs: 5_000, caller })
  /** A call that takes a large answer as a stream. */
  const streamed = (server: string, path: string) =>
    callMember(small.deps, plainMember(server), { path, timeoutMs: 5_000, large: 'stream' })
  const streamOf = (body: Uint8Array | ReadableStream<Uint8Array>) => {
    expect(body).toBeInstanceOf(ReadableStream)
    return body as ReadableStream<Uint8Array>
  }

  /** A plain-HTTP member whose `send` writes all of its bytes, waiting for the socket to drain as a real server does. */
  function member(answer: (path: string, send: (bytes: string | Uint8Array) => Promise<void>) => void) {
    const closed: number[] = []
    let opened = 0
    type Pending = { bytes: Buffer; done: () => void }
    const flush = (socket: Socket<{ id: number; queue: Pending[] }>) => {
      const queue = socket.data.queue
      while (queue.length > 0) {
        const next = queue[0]!
        const written = socket.write(next.bytes)
        if (written < next.bytes.length) {
          next.bytes = next.bytes.subarray(Math.max(0, written))
          return
        }
        queue.shift()
        next.done()
      }
    }
    const server = Bun.listen<{ id: number; queue: Pending[] }>({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open(socket) {
          socket.data = { id: ++opened, queue: [] }
        },
        close: (socket) => void closed.push(socket.data.id),
        drain: flush,
        data(socket, data) {
          const path = new TextDecoder().decode(data).split(' ')[1]!
          const send = (bytes: string | Uint8Array) =>
            new Promise<void>((done) => {
              socket.data.queue.push({ bytes: Buffer.from(bytes), done })
              flush(socket)
            })
          answer(path, send)
        },
      },
    })
    return { url: `http://127.0.0.1:${server.port}`, closed, stop: () => server.stop(true) }
  }
  const head = (length: number) => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`

  test("an answer larger than one caller's share, for a call that needs it whole → 502 naming the limit; the connection is closed, not read to its end", async () => {
    const server = member((_path, send) => void send(Buffer.concat([Buffer.from(head(3 * MiB)), Buffer.alloc(3 * MiB, 'x')])))
    try {
      const refused = await call(server.url, '/big').catch((e: unknown) => e)
      expect((refused as AppError).kind).toBe('upstream')
      expect((refused as AppError).message).toBe(MemberMessages.tooLarge('member', 2 * MiB))
      await eventually(() => server.closed.length === 1)
    } finally {
      server.stop()
    }
  })

  test('while four callers hold the budget with answers they need whole, a fifth → 503 with Retry-After; once those are read, it is served', async () => {
    const finish: (() => void)[] = []
    const server = member((path, send) => {
      const length = Math.floor(1.9 * MiB)
      if (!path.startsWith('/hold')) return void send(Buffer.concat([Buffer.from(head(length)), Buffer.alloc(length, 'f')]))
      void send(`${head(length)}{`)
      finish.push(() => void send(Buffer.alloc(length - 1, 'h')))
    })
    try {
      const holding = ['a', 'b', 'c', 'd'].map((caller) => call(server.url, `/hold-${caller}`, caller))
      await eventually(() => finish.length === 4)
      const busy = await eventually(async () => {
        const refused = await call(server.url, '/fifth', 'e').catch((e: unknown) => e)
        return refused instanceof AppError && refused
      })
      expect(busy.kind).toBe('unavailable')
      expect(busy.message).toBe(MemberMessages.busy)
      expect(busy.headers['retry-after']).toBe('1')
      for (const each of finish) each()
      expect((await Promise.all(holding)).map((a) => a.body.length)).toEqual(Array(4).fill(Math.floor(1.9 * MiB)))
      expect((await call(server.url, '/fifth', 'e')).status).toBe(200)
    } finally {
      server.stop()
    }
  })

  test('a call that takes streams: a 20 MiB answer comes back as a stream, byte for byte, and gives back what it held; a small one still comes whole', async () => {
    const big = Buffer.alloc(20 * MiB)
    for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(i, i)
    // Chunked, so the client learns its size only as it comes: buffered at first, then handed on as a stream.
    const chunked = Buffer.concat([
      Buffer.from(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n`),
      big,
      Buffer.from('\r\n0\r\n\r\n'),
    ])
    const server = member((path, send) => void send(path === '/big' ? chunked : `${head(2)}{}`))
    try {
      const answer = await streamed(server.url, '/big')
      expect(Buffer.from(await new Response(streamOf(answer.body)).arrayBuffer()).equals(big)).toBe(true)
      const whole = await streamed(server.url, '/small')
      expect(whole.body).toBeInstanceOf(Uint8Array)
      // Nothing of the budget was kept: the caller's whole share is there for an answer it needs whole.
      const budget = Math.floor(1.9 * MiB)
      server.stop()
      const next = member((_path, send) => void send(Buffer.concat([Buffer.from(head(budget)), Buffer.alloc(budget)])))
      try {
        expect((await call(next.url, '/x')).body.length).toBe(budget)
      } finally {
        next.stop()
      }
    } finally {
      server.stop()
    }
  })

  test('a streamed answer whose reader leaves → the connection to the member is closed; one whose member goes silent → the stream fails at the deadline', async () => {
    const stalled: string[] = []
    const server = member((path, send) => {
      void send(Buffer.concat([Buffer.from(head(64 * MiB)), Buffer.alloc(2 * MiB, 's')]))
      stalled.push(path)
    })
    try {
      const reader = streamOf((await streamed(server.url, '/leave')).body).getReader()
      expect((await reader.read()).done).toBe(false)
      await reader.cancel()
      await eventually(() => server.closed.length === 1)

      const body = streamOf((await streamed(server.url, '/silent')).body).getReader()
      let received = 0
      const ended = (async () => {
        for (;;) {
          const { done, value } = await body.read()
          if (done) return 'ended'
          received += value.length
        }
      })().catch((e: unknown) => (e as Error).name)
      await eventually(() => received === 2 * MiB)
      small.clock.advance(5_000)
      expect(await ended).toBe('TimeoutError')
      await eventually(() => server.closed.length === 2)
    } finally {
      server.stop()
    }
  })
})
