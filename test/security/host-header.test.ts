import { describe, expect, test } from 'bun:test'
import net from 'node:net'
import { makeTestApp } from '../support/app'

/** Sends one raw HTTP/1.1 request with a chosen Host header; returns the status and body. */
function rawGet(base: string, path: string, host: string, headers = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    let reply = ''
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${headers}Connection: close\r\n\r\n`),
    )
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      reply += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => resolve({ status: Number(reply.split(' ')[1]), body: reply.slice(reply.indexOf('\r\n\r\n') + 4) }))
  })
}

describe('a short Host header does not shift routing', () => {
  test.each(['a', 'ab', 'abc'])('Host: %s, GET /zzz/api/v1/user with a token → 404, not the user', async (host) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const base = await t.listen()
    const res = await rawGet(base, '/zzz/api/v1/user', host, `Authorization: token ${alice.token}\r\n`)
    expect(res.status).toBe(404)
    expect(res.body).not.toContain('"login"')
  })

  test.each(['a', 'abc'])('Host: %s, GET /api/v1/user with a token → 200 as that user', async (host) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const base = await t.listen()
    const res = await rawGet(base, '/api/v1/user', host, `Authorization: token ${alice.token}\r\n`)
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).login).toBe('alice')
  })

  test('Host: a, anonymous GET /api/v1/user → 401 (auth sees the routed path)', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    expect((await rawGet(base, '/api/v1/user', 'a')).status).toBe(401)
  })
})
