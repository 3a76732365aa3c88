import { afterAll, describe, expect, test } from 'bun:test'
import { startEmulator } from '../../src/kube-emulator'
import { rawExchange, rawRequest, statusLines } from '../support/raw-http'
import { importedCluster } from './support'

// What a client gets when it pipelines behind a proxied request, or sends a method the proxy does
// not relay, on a raw socket; the member's own request log says what reached it.

const seen: string[] = []
const member = await startEmulator({ tls: true, seed: true, log: (line) => seen.push(line) })
afterAll(() => member.stop())

async function lab() {
  const l = await importedCluster(member)
  const base = await l.t.listen()
  const credential = { Authorization: `token ${l.alice.token}` }
  // The token, the cluster's scope and a pooled connection to the member are warm: the relay goes out at once.
  expect((await fetch(`${base}/api/v1/clusters/alice/dev/k8s/version`, { headers: credential })).status).toBe(200)
  return { ...l, base, credential }
}

const json = { 'Content-Type': 'application/json' }
const C = '/api/v1/clusters/alice/dev'

describe('a request pipelined behind a proxied change (30.3)', () => {
  test('Bun closes the connection and answers neither; the change never reaches the member (a 499 in the log), on both path families', async () => {
    const l = await lab()
    const name = `piped-${crypto.randomUUID().slice(0, 8)}`
    const kept = `kept-${crypto.randomUUID().slice(0, 8)}`
    const configmaps = `${C}/k8s/api/v1/namespaces/demo/configmaps`
    expect((await l.t.as(l.alice).send('POST', configmaps, { metadata: { name: kept }, data: { a: '1' } })).status).toBe(201)
    const changes: [string, string, string][] = [
      ['POST', configmaps, JSON.stringify({ metadata: { name } })],
      ['POST', `${C}/proxy/core/v1/namespaces/demo/configmaps`, JSON.stringify({ metadata: { name } })],
      ['DELETE', `${configmaps}/${kept}`, ''],
      ['PATCH', `${C}/proxy/core/v1/namespaces/demo/configmaps/${kept}`, JSON.stringify({ data: { a: '2' } })],
    ]
    for (const [method, path, body] of changes) {
      const id = `piped-${method}-${crypto.randomUUID()}`
      const before = seen.length
      const answered = await rawExchange(
        l.base,
        rawRequest(method, path, { ...l.credential, ...json, 'X-Request-Id': id }, body) +
          rawRequest('GET', `${C}/k8s/version`, l.credential),
      )
      expect(`${method} ${path}: ${answered}`).toBe(`${method} ${path}: `)
      // The request's own log line (written once it has ended) is the event that it will send nothing more.
      const line = (await l.t.logFor(id)).find((entry) => entry.requestId === id)
      expect(`${method} ${path} ${line?.status}`).toBe(`${method} ${path} 499`)
      // Nothing but reads (the plain JSON PATCH reads the object first), and never the pipelined request.
      const reached = seen.slice(before)
      expect(reached.filter((entry) => !entry.startsWith('GET ') || entry.startsWith('GET /version'))).toEqual([])
    }
    expect((await l.t.as(l.alice).get(`${configmaps}/${name}`)).status).toBe(404)
    expect((await (await l.t.as(l.alice).get(`${configmaps}/${kept}`)).json()).data).toEqual({ a: '1' })
  })

  test('reads pipelined behind a proxied read: Bun closes the connection and answers none of them (the documented limit)', async () => {
    const l = await lab()
    const answered = await rawExchange(
      l.base,
      rawRequest('GET', `${C}/k8s/version`, l.credential) +
        rawRequest('GET', '/healthz', {}) +
        rawRequest('GET', '/readyz', { Connection: 'close' }),
    )
    // Never a later answer without the earlier ones: a client asks again, each on its own or in
    // order on a new connection. (A runtime that holds pipelined requests would answer all three.)
    expect(answered).toBe('')
  })
})

describe('methods the proxy does not relay', () => {
  test('PROPFIND, QUERY and PURGE on both path families → 405 with Allow; the member sees nothing', async () => {
    const l = await lab()
    const before = seen.length
    const answers: string[] = []
    for (const method of ['PROPFIND', 'QUERY', 'PURGE'])
      for (const path of [`${C}/k8s/api/v1/namespaces/demo/configmaps`, `${C}/proxy/core/v1/namespaces/demo/configmaps`]) {
        const raw = await rawExchange(l.base, rawRequest(method, path, { ...l.credential, Connection: 'close' }))
        answers.push(`${method} ${path} ${statusLines(raw)} ${/\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/i.test(raw)}`)
      }
    expect(answers.filter((a) => !a.endsWith('HTTP/1.1 405 Method Not Allowed true'))).toEqual([])
    expect(seen.slice(before)).toEqual([])
  })
})
