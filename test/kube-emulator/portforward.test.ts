import { afterEach, describe, expect, test } from 'bun:test'
import { FrameReader, HEADER_DICTIONARY } from '../../src/kube-emulator/spdy'
import { type ChannelSession, type Client, channelSocket, channelText, emulator, stopAll, upgradeWithoutSocket } from './fixtures'

afterEach(stopAll)

async function webPod(k: Client): Promise<string> {
  const { body } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')
  return body.items[0].metadata.name
}

const forward = async (k: Client, pod: string, ports: string, protocols = ['v4.channel.k8s.io']) =>
  channelSocket(k, `/api/v1/namespaces/demo/pods/${pod}/portforward?ports=${ports}`, protocols)

/** Waits until `channel` has received text matching `pattern` (the server answers asynchronously). */
async function received(s: ChannelSession, channel: number, pattern: RegExp): Promise<string> {
  await s.until(() => pattern.test(channelText(s, channel)))
  return channelText(s, channel)
}

const request = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`

describe('port-forward over the kubelet channel protocol', () => {
  test('ports=80 on a web pod → each channel opens with the port (LE), then HTTP answers name the pod and container; keep-alive serves a second request', async () => {
    const k = await emulator()
    const pod = await webPod(k)
    const s = await forward(k, pod, '80')
    expect(s.ws.protocol).toBe('v4.channel.k8s.io')
    s.send(0, request('/first'))
    const first = await received(s, 0, /answered GET \/first\n$/)
    expect([...s.payloads[0]]).toEqual([80, 0])
    expect(s.frames.slice(0, 2).map((f) => f.channel)).toEqual([0, 1])
    expect([...s.payloads[1]]).toEqual([80, 0])
    expect(first).toContain('HTTP/1.1 200 OK\r\n')
    expect(first).toContain('Connection: keep-alive\r\n')
    expect(first).toContain(`pod ${pod} (namespace demo), container app (image nginx:1.27), port 80 answered GET /first\n`)
    s.send(0, request('/healthz', 'Connection: close\r\n'))
    expect(await s.closed).toBe(1000)
    expect(channelText(s, 0)).toMatch(/Connection: close\r\n\r\nok\n$/)
    expect(channelText(s, 1)).toBe('P\u0000')
  })

  test('a browser (Accept: text/html) gets a page; HEAD gets the head only', async () => {
    const k = await emulator()
    const s = await forward(k, await webPod(k), '80')
    s.send(0, request('/', 'Accept: text/html,application/xhtml+xml\r\n'))
    expect(await received(s, 0, /<\/html>\n$/)).toContain('Content-Type: text/html; charset=utf-8')
    const before = channelText(s, 0).length
    s.send(0, 'HEAD /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    await s.closed
    const head = channelText(s, 0).slice(before)
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Content-Length: \d+\r\n[\s\S]*\r\n\r\n$/)
  })

  test('base64 protocol, ports=80,81 → 81 refused on its error channel (3) with the kubelet wording, 80 still answers', async () => {
    const k = await emulator()
    const s = await forward(k, await webPod(k), '80,81', ['v4.base64.channel.k8s.io'])
    expect(s.ws.protocol).toBe('v4.base64.channel.k8s.io')
    expect(await received(s, 3, /refused/)).toContain('error forwarding port 81 to pod')
    expect(channelText(s, 3)).toContain('dial tcp4 127.0.0.1:81: connect: connection refused')
    s.send(0, request('/', 'Connection: close\r\n'))
    expect(await s.closed).toBe(1000)
    expect(channelText(s, 0)).toContain('port 80 answered GET /')
  })

  test('what is not HTTP → 400 and the connection closes; a huge head → 431', async () => {
    const k = await emulator()
    const pod = await webPod(k)
    const s = await forward(k, pod, '80')
    s.send(0, 'hello there\r\n\r\n')
    expect(await s.closed).toBe(1000)
    expect(channelText(s, 0)).toStartWith('P\u0000HTTP/1.1 400 Bad Request')
    const big = await forward(k, pod, '80')
    big.send(0, `GET / HTTP/1.1\r\nX: ${'a'.repeat(70 * 1024)}`)
    expect(await big.closed).toBe(1000)
    expect(channelText(big, 0)).toContain('HTTP/1.1 431 Request Header Fields Too Large')
  })
})

describe('port-forward refused before the upgrade', () => {
  test('the channel protocol without ports → 400; a port that is no number → 400', async () => {
    const k = await emulator()
    const pod = await webPod(k)
    const none = await upgradeWithoutSocket(k, `/api/v1/namespaces/demo/pods/${pod}/portforward`, {
      'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
    })
    expect([none.status, (await none.json()).message]).toEqual([400, 'query parameter "ports" is required'])
    const bad = await upgradeWithoutSocket(k, `/api/v1/namespaces/demo/pods/${pod}/portforward?ports=http`, {
      'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
    })
    expect(bad.status).toBe(400)
  })

  test("an unknown subprotocol → 400 naming the supported ones; kubectl's SPDY fallback (POST, Upgrade: SPDY/3.1) → 400 Status", async () => {
    const k = await emulator()
    const pod = await webPod(k)
    const unknown = await upgradeWithoutSocket(k, `/api/v1/namespaces/demo/pods/${pod}/portforward?ports=80`, {
      'Sec-WebSocket-Protocol': 'nope',
    })
    expect(unknown.status).toBe(400)
    expect((await unknown.json()).message).toContain('SPDY/3.1+portforward.k8s.io')
    const spdy = await k.request('POST', `/api/v1/namespaces/demo/pods/${pod}/portforward`, {
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io' },
    })
    expect(spdy.status).toBe(400)
    expect((await spdy.json()).kind).toBe('Status')
  })

  test('a user without create on pods/portforward → 403; a missing pod → 404', async () => {
    const k = await emulator({ users: { r: { name: 'viewer', verbs: ['get', 'list'] } } })
    const res = await k.request('GET', `/api/v1/namespaces/demo/pods/${await webPod(k)}/portforward?ports=80`, {
      token: 'r',
      headers: { Connection: 'Upgrade', Upgrade: 'websocket' },
    })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toContain('cannot create resource "pods/portforward"')
    expect((await upgradeWithoutSocket(k, '/api/v1/namespaces/demo/pods/nope/portforward?ports=80')).status).toBe(404)
  })

  test('discovery lists pods/attach and pods/portforward with create and get', async () => {
    const k = await emulator()
    const { body } = await k.json('GET', '/api/v1')
    const byName = Object.fromEntries(body.resources.map((r: { name: string }) => [r.name, r]))
    expect(byName['pods/portforward']).toMatchObject({ kind: 'PodPortForwardOptions', verbs: ['create', 'get'] })
    expect(byName['pods/attach']).toMatchObject({ kind: 'PodAttachOptions', verbs: ['create', 'get'] })
  })
})

describe('SPDY framing', () => {
  test("the header dictionary's Adler-32 is the DICTID kubectl's first header block names (0xe3c6a7c2)", () => {
    let a = 1
    let b = 0
    for (const byte of HEADER_DICTIONARY) {
      a = (a + byte) % 65521
      b = (b + a) % 65521
    }
    expect((((b << 16) | a) >>> 0).toString(16)).toBe('e3c6a7c2')
  })

  test('frames cut anywhere across messages come out whole; a frame above the limit is refused', () => {
    // A PING (control) and a DATA frame on stream 1 with FIN, as one byte string.
    const bytes = Buffer.from('80030006000000040000000100000001010000036869210a'.slice(0, 48), 'hex')
    for (let cut = 1; cut < bytes.length; cut++) {
      const reader = new FrameReader({ data: 1024, control: 64 })
      const frames = [...reader.push(bytes.subarray(0, cut)), ...reader.push(bytes.subarray(cut))]
      expect(frames).toEqual([
        { control: true, type: 6, flags: 0, payload: new Uint8Array([0, 0, 0, 1]) },
        { control: false, streamId: 1, flags: 1, data: new Uint8Array([0x68, 0x69, 0x21]) },
      ])
    }
    expect(() => new FrameReader({ data: 2, control: 64 }).push(bytes.subarray(12))).toThrow('frame of 3 bytes exceeds 2')
  })
})
