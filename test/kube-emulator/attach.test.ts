import { afterEach, describe, expect, test } from 'bun:test'
import { apiPod, type Client, channelSocket, channelText, emulator, eventually, stopAll } from './fixtures'

afterEach(stopAll)

const attach = (k: Client, pod: string, query = 'stdout=true&stderr=true') =>
  channelSocket(k, `/api/v1/namespaces/demo/pods/${pod}/attach?${query}`, ['v5.channel.k8s.io'])

describe('attach over WebSocket', () => {
  test("a v5 client attaches to a server container → its new log lines arrive on stdout; the pod's deletion ends the stream with Success", async () => {
    const k = await emulator({ logIntervalMs: 20 })
    const pod = await apiPod(k)
    const s = await attach(k, pod)
    expect(s.ws.protocol).toBe('v5.channel.k8s.io')
    await s.until(() => channelText(s).split('\n').length > 3)
    expect(channelText(s)).toMatch(new RegExp(`^level=\\w+ pod=${pod} container=api seq=\\d+ msg="GET `))
    // Only what the container prints from now on: not its boot lines.
    expect(channelText(s)).not.toContain('msg="starting"')
    expect((await k.request('DELETE', `/api/v1/namespaces/demo/pods/${pod}`)).status).toBe(200)
    expect(await s.closed).toBe(1000)
    expect(JSON.parse(channelText(s, 3))).toEqual({ metadata: {}, status: 'Success' })
  })

  test("a command's container (restartPolicy Never) → what it prints after the attach, then Success when it ends", async () => {
    const k = await emulator()
    const pod = {
      metadata: { name: 'once', namespace: 'demo' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'job', image: 'busybox', command: ['sh', '-c', 'echo early; sleep 1; echo finished'] }],
      },
    }
    expect((await k.json('POST', '/api/v1/namespaces/demo/pods', pod)).status).toBe(201)
    await eventually(async () => (await k.json('GET', '/api/v1/namespaces/demo/pods/once')).body.status?.phase === 'Running')
    const s = await attach(k, 'once', 'stdout=true&stdin=true')
    s.send(0, 'ignored input\n')
    expect(await s.closed).toBe(1000)
    expect(channelText(s)).toBe('finished\n')
    expect(JSON.parse(channelText(s, 3)).status).toBe('Success')
  })

  test('attach refused before the upgrade: no stream asked → 400; a two-container pod without container → 400; a viewer → 403', async () => {
    const k = await emulator({ users: { r: { name: 'viewer', verbs: ['get', 'list'] } } })
    const headers = {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    }
    const pod = await apiPod(k)
    const none = await k.request('GET', `/api/v1/namespaces/demo/pods/${pod}/attach`, { headers })
    expect([none.status, (await none.json()).message]).toEqual([400, 'you must specify at least 1 of stdin, stdout, stderr'])
    const { body } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')
    const two = await k.request('GET', `/api/v1/namespaces/demo/pods/${body.items[0].metadata.name}/attach?stdout=true`, { headers })
    expect((await two.json()).message).toContain('choose one of: [app side]')
    const viewer = await k.request('GET', `/api/v1/namespaces/demo/pods/${pod}/attach?stdout=true`, { headers, token: 'r' })
    expect(viewer.status).toBe(403)
    expect((await viewer.json()).message).toContain('cannot create resource "pods/attach"')
  })
})
