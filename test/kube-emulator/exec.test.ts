import { afterEach, describe, expect, test } from 'bun:test'
import {
  apiPod,
  type Client,
  channelSocket,
  channelText,
  emulator,
  type ChannelSession as Session,
  stopAll,
  upgradeWithoutSocket,
} from './fixtures'

afterEach(stopAll)

/** Opens an exec WebSocket offering `protocols`; collects decoded frames until the server closes. */
const exec = (k: Client, pod: string, query: string, protocols: string[]) =>
  channelSocket(k, `/api/v1/namespaces/demo/pods/${pod}/exec?${query}`, protocols)

const out = channelText
const statusOf = (s: Session) => JSON.parse(s.frames.find((f) => f.channel === 3)!.text)
const q = (cmd: string[], extra = 'stdout=true&stderr=true') => `${cmd.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${extra}`

describe('exec over WebSocket', () => {
  test('a v5 client runs echo hi → ready frame, "hi\\n" on stdout, Success status, close 1000', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['echo', 'hi']), ['v5.channel.k8s.io'])
    expect(s.ws.protocol).toBe('v5.channel.k8s.io')
    expect(await s.closed).toBe(1000)
    expect(s.frames[0]).toEqual({ channel: 1, text: '' })
    expect(out(s)).toBe('hi\n')
    expect(statusOf(s)).toEqual({ metadata: {}, status: 'Success' })
  })

  test('a client that has not sent a frame gets none; its first frame (a resize) starts the session: ready frame, output, close', async () => {
    // A start delay far beyond the test's life: only the client's frame can start the command.
    const k = await emulator({ execStartDelayMs: 600_000 })
    const s = await exec(k, await apiPod(k), q(['echo', 'hi']), ['v5.channel.k8s.io'])
    await Bun.sleep(0)
    const before = s.frames.length
    s.send(4, '{"Width":100,"Height":40}')
    expect(await s.closed).toBe(1000)
    expect(before).toBe(0)
    expect(s.frames.slice(0, 2)).toEqual([
      { channel: 1, text: '' },
      { channel: 1, text: 'hi\n' },
    ])
  })

  test('a v5 client runs sh -c "exit 3" → NonZeroExitCode with an ExitCode cause of 3', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['sh', '-c', 'exit 3']), ['v5.channel.k8s.io'])
    await s.closed
    expect(statusOf(s)).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    })
  })

  test('a client offering only v4 → v4 is answered (never v5) with a JSON status', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['false']), ['v4.channel.k8s.io'])
    expect(s.ws.protocol).toBe('v4.channel.k8s.io')
    await s.closed
    expect(statusOf(s).details.causes[0]).toEqual({ reason: 'ExitCode', message: '1' })
  })

  test('a base64.channel.k8s.io client → text frames, and a failure arrives as plain text', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['sh', '-c', 'echo out; echo err >&2; exit 2']), ['base64.channel.k8s.io'])
    expect(s.ws.protocol).toBe('base64.channel.k8s.io')
    await s.closed
    expect(out(s)).toBe('out\n')
    expect(out(s, 2)).toBe('err\n')
    expect(s.frames.find((f) => f.channel === 3)!.text).toContain('exit code 2')
  })

  test('a channel.k8s.io client running a successful command → no status frame at all', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['date']), ['channel.k8s.io'])
    await s.closed
    expect(out(s)).toMatch(/UTC \d{4}\n$/)
    expect(s.frames.some((f) => f.channel === 3)).toBe(false)
  })

  test('a v5 client pipes "abc" into cat and closes stdin → "abc" on stdout, then Success', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['cat'], 'stdin=true&stdout=true&stderr=true'), ['v5.channel.k8s.io'])
    s.send(0, 'abc')
    s.send(255, [0])
    await s.closed
    expect(out(s)).toBe('abc')
    expect(statusOf(s).status).toBe('Success')
  })

  test('a v5 client drives an interactive sh over stdin → each line runs; exit 4 ends it with code 4', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['sh'], 'stdin=true&stdout=true&stderr=true'), ['v5.channel.k8s.io'])
    s.send(0, 'echo $LOG_LEVEL\nls /etc | cat\nnope\n')
    s.send(0, 'exit 4\n')
    await s.closed
    expect(out(s)).toBe('info\nhostname\nhosts\nos-release\nresolv.conf\n')
    expect(out(s, 2)).toBe('sh: nope: not found\n')
    expect(statusOf(s).details.causes[0].message).toBe('4')
  })

  test('a tty client resizes and runs env → COLUMNS and LINES follow the resize, stderr merged', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['sh'], 'stdin=true&stdout=true&tty=true'), ['v5.channel.k8s.io'])
    s.send(4, JSON.stringify({ Width: 100, Height: 40 }))
    s.send(0, 'env\r')
    s.send(0, 'exit\r')
    await s.closed
    expect(out(s)).toContain('COLUMNS=100\r\nLINES=40\r\n')
  })

  test('a client runs env and sleep 0.1 → the container env, then Success after the sleep', async () => {
    const k = await emulator()
    const started = Date.now()
    const s = await exec(k, await apiPod(k), q(['sh', '-c', 'env && sleep 0.1 && echo done']), ['v5.channel.k8s.io'])
    await s.closed
    expect(Date.now() - started).toBeGreaterThanOrEqual(100)
    expect(out(s)).toContain('LOG_LEVEL=info\n')
    expect(out(s)).toEndWith('done\n')
  })

  test('a client runs an unknown executable → Failure status naming it', async () => {
    const k = await emulator()
    const s = await exec(k, await apiPod(k), q(['nope']), ['v5.channel.k8s.io'])
    await s.closed
    expect(statusOf(s)).toMatchObject({ status: 'Failure', reason: 'InternalError' })
    expect(statusOf(s).message).toContain('"nope": executable file not found in $PATH')
  })
})

describe('exec refused before the upgrade', () => {
  test('no stdin, stdout or stderr → 400', async () => {
    const k = await emulator()
    const res = await upgradeWithoutSocket(k, `/api/v1/namespaces/demo/pods/${await apiPod(k)}/exec?command=ls`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe('you must specify at least 1 of stdin, stdout, stderr')
  })

  test('a missing pod → 404', async () => {
    const k = await emulator()
    expect((await upgradeWithoutSocket(k, '/api/v1/namespaces/demo/pods/nope/exec?command=ls&stdout=true')).status).toBe(404)
  })

  test('a two-container pod without container → 400 naming the choices', async () => {
    const k = await emulator()
    const { body } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')
    const res = await upgradeWithoutSocket(k, `/api/v1/namespaces/demo/pods/${body.items[0].metadata.name}/exec?command=ls&stdout=true`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toContain('choose one of: [app side]')
  })

  test("a SPDY upgrade attempt (kubectl's fallback) → 400 Status, never 101", async () => {
    const k = await emulator()
    const res = await k.request('POST', `/api/v1/namespaces/demo/pods/${await apiPod(k)}/exec?command=ls&stdout=true`, {
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).kind).toBe('Status')
  })

  test('a user without create on pods/exec → 403', async () => {
    const k = await emulator({ users: { r: { name: 'viewer', verbs: ['get', 'list'] } } })
    const res = await k.request('GET', `/api/v1/namespaces/demo/pods/${await apiPod(k)}/exec?command=ls&stdout=true`, {
      token: 'r',
      headers: { Connection: 'Upgrade', Upgrade: 'websocket' },
    })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toContain('cannot create resource "pods/exec"')
  })
})
