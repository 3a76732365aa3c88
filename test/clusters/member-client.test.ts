import { afterAll, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import type { ClusterConnection } from '../../src/clusters/connection'
import { callMember, HANDSHAKE_TIMEOUT_MS, memberJson as memberJsonOf, openMemberWebSocket } from '../../src/clusters/member/client'
import { AppError } from '../../src/errors'
import { startEmulator } from '../../src/kube-emulator'
import { makeTestApp } from '../support/app'
import { eventually } from '../support/wait'

const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
const memberJson = <T>(name: string, connection: ClusterConnection, path: string, timeoutMs?: number) =>
  memberJsonOf<T>(t.deps, { name, connection }, path, { timeoutMs })

const emulator = await startEmulator({ tls: true, seed: false })
afterAll(() => emulator.stop())

const plain = (server: string, token = 'member-token'): ClusterConnection => ({
  server,
  caData: '',
  tlsServerName: '',
  insecureSkipTlsVerify: false,
  credential: { token },
})

test('a member answering 302 to another loopback port → the 302 comes back, the other port never sees the credential', async () => {
  const seen: (string | null)[] = []
  const elsewhere = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => {
      seen.push(req.headers.get('authorization'))
      return Response.json({ gitVersion: 'v9.9.9' })
    },
  })
  const member = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${elsewhere.port}/version` } }),
  })
  try {
    const res = await callMember(t.deps, { name: 'm', connection: plain(`http://127.0.0.1:${member.port}`) }, { path: '/version' })
    expect(res.status).toBe(302)
    const json = await memberJson('m', plain(`http://127.0.0.1:${member.port}`), '/version').catch((e: unknown) => e)
    expect(json).toBeInstanceOf(AppError)
    expect((json as AppError).kind).toBe('upstream')
    expect(seen).toEqual([])
  } finally {
    await member.stop(true)
    await elsewhere.stop(true)
  }
})

test('a member that never answers → upstream "did not answer in time" within the timeout, no credential in the message', async () => {
  const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Promise<Response>(() => undefined) })
  try {
    const started = performance.now()
    const error = await memberJson('slow', plain(`http://127.0.0.1:${silent.port}`, 'secret-token-1'), '/version', 300).catch(
      (e: unknown) => e,
    )
    expect(performance.now() - started).toBeLessThan(2000)
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).message).toBe('cluster "slow" did not answer in time')
  } finally {
    await silent.stop(true)
  }
})

test('a TLS member checked against its CA → answers; without the CA (system roots) → upstream, never retried insecurely', async () => {
  const withCa: ClusterConnection = { ...plain(emulator.url, emulator.token), caData: emulator.caCertPem! }
  expect((await memberJson<{ gitVersion: string }>('emu', withCa, '/version')).gitVersion).toMatch(/^v1\./)
  const error = await memberJson('emu', plain(emulator.url, emulator.token), '/version').catch((e: unknown) => e)
  expect((error as AppError).kind).toBe('upstream')
  expect((error as AppError).message).toBe(
    'cluster "emu" presented a TLS certificate that the configured certificate authority did not sign',
  )
})

test('a TLS member whose certificate does not name tlsServerName → upstream', async () => {
  const wrongName: ClusterConnection = {
    ...plain(emulator.url, emulator.token),
    caData: emulator.caCertPem!,
    tlsServerName: 'not-the-emulator.example',
  }
  const error = await memberJson('emu', wrongName, '/version').catch((e: unknown) => e)
  expect((error as AppError).kind).toBe('upstream')
})

test('a member that sends headers and then stalls the body → upstream "did not answer in time", not a bare DOMException', async () => {
  const stalled = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch: () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"gitVersion":'))
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      ),
  })
  try {
    const error = await memberJson('stall', plain(`http://127.0.0.1:${stalled.port}`), '/version', 300).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).kind).toBe('upstream')
    expect((error as AppError).message).toBe('cluster "stall" did not answer in time')
  } finally {
    await stalled.stop(true)
  }
})

test('a member answering 200 with something that is not JSON → upstream naming the cluster, not a SyntaxError', async () => {
  const html = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => new Response('<html>login</html>', { headers: { 'content-type': 'text/html' } }),
  })
  try {
    const error = await memberJson('portal', plain(`http://127.0.0.1:${html.port}`), '/version').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).kind).toBe('upstream')
    expect((error as AppError).message).toBe('cluster "portal" answered /version with something that is not JSON')
  } finally {
    await html.stop(true)
  }
})

test('100 exec handshakes to a member that accepts and never answers → each fails "did not answer in time" at the handshake deadline, and every descriptor is released', async () => {
  const open = new Set<unknown>()
  const silent = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open: (socket) => void open.add(socket),
      close: (socket) => void open.delete(socket),
      data() {},
    },
  })
  const descriptors = () => readdirSync('/proc/self/fd').length
  try {
    const before = descriptors()
    const attempts = Array.from({ length: 100 }, () =>
      openMemberWebSocket(
        t.deps,
        { name: 'silent', connection: plain(`http://127.0.0.1:${silent.port}`) },
        '/exec',
        ['v5.channel.k8s.io'],
        {},
      ).then(
        () => 'opened',
        (error: unknown) => (error instanceof AppError ? error.message : String(error)),
      ),
    )
    await eventually(() => open.size === 100)
    // Each upgrade holds a descriptor at both ends (this process is the member as well).
    expect(descriptors()).toBeGreaterThan(before + 180)
    t.clock.advance(HANDSHAKE_TIMEOUT_MS)
    expect(new Set(await Promise.all(attempts))).toEqual(new Set(['cluster "silent" did not answer in time']))
    await eventually(() => open.size === 0)
    await eventually(() => descriptors() <= before + 5)
  } finally {
    silent.stop(true)
  }
})
