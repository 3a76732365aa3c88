import { describe, expect, test } from 'bun:test'
import net from 'node:net'
import { ANONYMOUS_BODY_BYTES, Messages } from '../../src/http/body'
import { makeTestApp, PASSWORD } from '../support/app'

interface RawReply {
  status: number
  body: string
  afterMs: number
}

/**
 * Sends a request head and `sent` bytes of body over a raw socket, then waits: a server that
 * answers without the rest of the body has decided before reading it.
 */
function sendPartial(base: string, head: string, sent: string, timeoutMs = 5_000): Promise<RawReply> {
  const { hostname, port } = new URL(base)
  const started = performance.now()
  return new Promise((resolve, reject) => {
    let reply = ''
    const socket = net.connect(Number(port), hostname, () => socket.write(`${head}\r\n${sent}`))
    const give = () => {
      clearTimeout(timer)
      socket.destroy()
      const bodyAt = reply.indexOf('\r\n\r\n')
      resolve({
        status: Number(reply.split(' ')[1]),
        body: bodyAt < 0 ? '' : reply.slice(bodyAt + 4),
        afterMs: performance.now() - started,
      })
    }
    const timer = setTimeout(give, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      reply += chunk
      const bodyAt = reply.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(reply)?.[1]
      if (bodyAt >= 0 && length !== undefined && reply.length - bodyAt - 4 >= Number(length)) give()
    })
    socket.on('error', reject)
  })
}

const postHead = (path: string, headers: Record<string, string>) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')

describe('request bodies before authentication', () => {
  test('an anonymous sign-in declaring a 9 MiB body → 413 at once, before the body is sent', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    const reply = await sendPartial(base, postHead('/api/v1/user/signin', { 'Content-Length': String(9 * 1024 * 1024) }), '')
    expect(reply.status).toBe(413)
    expect(JSON.parse(reply.body).message).toBe(Messages.anonymousTooLarge(ANONYMOUS_BODY_BYTES))
  })

  test('an anonymous chunked body is cut off past the anonymous limit → 413', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    const chunk = 'x'.repeat(16 * 1024)
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('')
    const reply = await sendPartial(base, postHead('/api/v1/user/signin', { 'Transfer-Encoding': 'chunked' }), `${chunks}`)
    expect(reply.status).toBe(413)
  })

  test('a made-up token with a 9 MiB body → 401 before the body is sent', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    const reply = await sendPartial(
      base,
      postHead('/api/v1/user/emails', { Authorization: `token ${'f'.repeat(40)}`, 'Content-Length': String(9 * 1024 * 1024) }),
      '',
    )
    expect(reply.status).toBe(401)
  })

  test('anonymous with a body over the anonymous limit on a signed-in route → 401, not 413', async () => {
    const t = await makeTestApp()
    const res = await t.request('POST', '/api/v1/user/emails', { body: { emails: ['a@b.test'], pad: 'x'.repeat(ANONYMOUS_BODY_BYTES) } })
    expect(res.status).toBe(401)
  })

  test('a signed-in caller may send more than the anonymous limit', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['a@b.test'], pad: 'x'.repeat(ANONYMOUS_BODY_BYTES) })
    expect(res.status).toBe(201)
  })

  test('a JSON body that is not UTF-8 → 422 naming it; nothing is stored with U+FFFD in its place', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const body = Buffer.concat([Buffer.from('{"full_name": "Al'), Buffer.from([0xe9]), Buffer.from('ce"}')])
    const res = await t
      .as(alice)
      .send('POST', '/api/v1/user/settings/profile', new Uint8Array(body), { 'content-type': 'application/json' })
    expect(res.status).toBe(422)
    expect(((await res.json()) as { message: string }).message).toBe(Messages.notUtf8)
    expect(((await (await t.as(alice).get('/api/v1/user')).json()) as { full_name: string }).full_name).toBe('')
  })

  test('a body that stalls → 408 once PLATFORM_BODY_TIMEOUT_SECONDS has passed; the server keeps serving', async () => {
    const t = await makeTestApp({ PLATFORM_BODY_TIMEOUT_SECONDS: '1' })
    await t.users('alice')
    const base = await t.listen()
    const reply = await sendPartial(base, postHead('/api/v1/user/signin', { 'Content-Length': '200' }), '{"username":"al')
    expect(reply.status).toBe(408)
    expect(JSON.parse(reply.body).message).toBe(Messages.stalled(1))
    expect(reply.afterMs).toBeLessThan(4_000)
    const ok = await fetch(`${base}/api/v1/user/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: PASSWORD }),
    })
    expect(ok.status).toBe(200)
  })

  test('150 anonymous connections stalled inside 9 MiB bodies are all refused at once; the server answers others', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    const replies = await Promise.all(
      Array.from({ length: 150 }, () =>
        sendPartial(base, postHead('/api/v1/user/signin', { 'Content-Length': String(9 * 1024 * 1024) }), '{"username":"'),
      ),
    )
    expect(replies.every((r) => r.status === 413)).toBe(true)
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
  })
})
