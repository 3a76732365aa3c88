import { describe, expect, test } from 'bun:test'
import { MethodMessages } from '../../src/http/methods'
import { makeTestApp } from '../support/app'
import { rawExchange, rawRequest, statusLines } from '../support/raw-http'

// What the server answers for methods it does not serve, on a raw socket as a client sends them.

const lab = async () => {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  return { t, base: await t.listen(), credential: { Authorization: `token ${alice!.token}`, Connection: 'close' } }
}

describe('methods the platform does not serve (30.3)', () => {
  test("a method in Bun's table the platform serves nowhere (PROPFIND, QUERY, TRACE, PURGE) → 405 naming the served methods in Allow, on a route and an unknown path", async () => {
    const { base, credential } = await lab()
    const answers: string[] = []
    for (const method of ['PROPFIND', 'QUERY', 'TRACE', 'PURGE'])
      for (const path of ['/api/v1/user', '/healthz', '/nowhere'])
        answers.push(`${method} ${path} ${statusLines(await rawExchange(base, rawRequest(method, path, credential)))}`)
    expect(answers.filter((a) => !a.endsWith('HTTP/1.1 405 Method Not Allowed'))).toEqual([])
    const raw = await rawExchange(base, rawRequest('PROPFIND', '/api/v1/user', credential))
    expect(raw).toMatch(/\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/i)
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).message).toBe(MethodMessages.notServed('PROPFIND'))
  })

  test('the served methods route as before: a GET answers, an unknown path is 404, an invalid credential 401 before any 405', async () => {
    const { base, credential } = await lab()
    expect(statusLines(await rawExchange(base, rawRequest('GET', '/api/v1/user', credential)))).toEqual(['HTTP/1.1 200 OK'])
    expect(statusLines(await rawExchange(base, rawRequest('DELETE', '/nowhere', credential)))).toEqual(['HTTP/1.1 404 Not Found'])
    const forged = { Authorization: 'token 0000000000000000000000000000000000000000', Connection: 'close' }
    expect(statusLines(await rawExchange(base, rawRequest('PROPFIND', '/nowhere', forged)))).toEqual(['HTTP/1.1 401 Unauthorized'])
  })

  test("a token outside Bun's method table (FOO, a lower-case get): Bun closes the connection without an answer, before the app (the documented limit)", async () => {
    const { t, base, credential } = await lab()
    const before = t.logs.length
    for (const method of ['FOO', 'get', 'Get'])
      expect(`${method}: ${await rawExchange(base, rawRequest(method, '/api/v1/user', credential))}`).toBe(`${method}: `)
    expect(t.logs.slice(before)).toEqual([])
  })
})
