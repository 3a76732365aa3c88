import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { UpgradeMessages } from '../../src/http/websocket-upgrade'
import { startEmulator } from '../../src/kube-emulator'
import { tempDir } from '../support/app'
import { channelText, openChannelSocket } from '../support/channel-socket'
import { attachLines, CP_TREE, cpRoundTrip, holdWithRequests, portForward } from '../support/kubectl-streams'
import { eventually } from '../support/wait'
import { kubectlLab, runKubectl, spawnKubectl } from './kubectl-lab'

// The member over TLS; it records what reaches it, so tests can prove what did not.
const seen: string[] = []
const member = await startEmulator({ tls: true, logIntervalMs: 100, log: (line) => void seen.push(line) })
afterAll(() => member.stop())

const lab = await kubectlLab(member)
/** What a read:cluster token is told on an upgrade subresource (a 403). */
const WRITE_SCOPE_REQUIRED = 'token does not have at least one of required scope(s): [write:cluster]'
const kubectl = (...args: string[]) => runKubectl(lab, lab.kubeconfig, ...args)
const spawn = spawnKubectl(lab, lab.kubeconfig)

async function podOf(app: string): Promise<string> {
  const { out } = await kubectl('get', 'pods', '-n', 'demo', '-l', `app=${app}`, '-o', 'jsonpath={.items[0].metadata.name}')
  return out
}

describe('kubectl port-forward, cp and attach through the platform (native passthrough, TLS)', () => {
  test('port-forward pod/… and svc/web serve HTTP on the local port until interrupted', async () => {
    const pod = await podOf('api')
    const toPod = await portForward(spawn, `pod/${pod}`, 8080, ['-n', 'demo'])
    expect(await (await fetch(`http://127.0.0.1:${toPod.port}/hello`)).text()).toBe(
      `pod ${pod} (namespace demo), container api (image ghcr.io/example/api:1.4.2), port 8080 answered GET /hello\n`,
    )
    const toService = await portForward(spawn, 'svc/web', 80, ['-n', 'demo'])
    const page = await fetch(`http://127.0.0.1:${toService.port}/`, { headers: { accept: 'text/html' } })
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await page.text()).toMatch(/<h1>web-\S+\/app<\/h1>/)
    expect(await (await fetch(`http://127.0.0.1:${toService.port}/healthz`)).text()).toBe('ok\n')
    await toService.stop()
    await toPod.stop()
    await expect(fetch(`http://127.0.0.1:${toPod.port}/`)).rejects.toThrow()
    expect(seen.some((line) => line.startsWith(`GET /api/v1/namespaces/demo/pods/${pod}/portforward 101`))).toBe(true)
  })

  test('cp a file and a directory into a pod and back out, modes kept', async () => {
    const pod = await podOf('api')
    const copied = await cpRoundTrip((args) => kubectl(...args), `demo/${pod}`, tempDir())
    expect(copied).toEqual({ codes: [0, 0, 0, 0], ...CP_TREE })
    const listed = await kubectl('exec', '-n', 'demo', pod, '--', 'ls', '-l', '/tmp/site/assets')
    expect(listed.out).toMatch(/^-rwxr-x--- .* 10 .* run\.sh\n$/)
  })

  test("attach shows the container's output", async () => {
    const pod = await podOf('api')
    const lines = await attachLines(spawn, [pod, '-n', 'demo'], 2)
    for (const line of lines) expect(line).toMatch(new RegExp(`^level=\\w+ pod=${pod} container=api seq=\\d+ msg=`))
  })

  test('a read:cluster kubeconfig → port-forward and attach refused (403), and neither reaches the member', async () => {
    const pod = await podOf('api')
    const before = seen.length
    const forward = spawnKubectl(
      lab,
      lab.readonlyKubeconfig,
    )(['port-forward', '-n', 'demo', `pod/${pod}`, ':8080', '--address', '127.0.0.1'])
    const forwardErr = await new Response(forward.stderr).text()
    expect(await forward.exited).toBe(1)
    // kubectl prints the 403's message (the status itself: proxy-upgrades.test.ts).
    expect(forwardErr).toBe(`error: error upgrading connection: ${WRITE_SCOPE_REQUIRED}\n`)
    const attached = await runKubectl(lab, lab.readonlyKubeconfig, 'attach', '-n', 'demo', pod)
    expect(attached.code).toBe(1)
    expect(attached.err).toContain(WRITE_SCOPE_REQUIRED)
    expect(seen.slice(before).filter((line) => /\/(portforward|attach)/.test(line))).toEqual([])
  })
})

describe("port-forward's channel protocol (scripts, browsers) through both route families", () => {
  test("v4.channel.k8s.io with ?ports=8080 on /k8s and on /proxy → the pod answers on the data channel; the member ending the connection closes the caller's", async () => {
    const pod = await podOf('api')
    for (const family of ['k8s/api/v1', 'proxy/core/v1']) {
      const s = await openChannelSocket(
        `${lab.base.replace(/^https/, 'wss')}/api/v1/clusters/alice/dev/${family}/namespaces/demo/pods/${pod}/portforward?ports=8080`,
        ['v4.channel.k8s.io'],
        { authorization: `token ${lab.alice.token}` },
        lab.caPem,
      )
      expect(s.ws.protocol).toBe('v4.channel.k8s.io')
      s.send(0, 'GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
      // The container's server closes after answering; the member ends the session, and the platform the caller's.
      expect(await s.closed).toBe(1000)
      expect(channelText(s, 0)).toEndWith(
        `pod ${pod} (namespace demo), container api (image ghcr.io/example/api:1.4.2), port 8080 answered GET /hello\n`,
      )
    }
  })
})

describe('attach through both route families (a WebSocket client)', () => {
  test("v5.channel.k8s.io attach on /k8s and on /proxy → the container's output on stdout (channel 1); the caller closing ends the member's session", async () => {
    const pod = await podOf('api')
    for (const family of ['k8s/api/v1', 'proxy/core/v1']) {
      const s = await openChannelSocket(
        `${lab.base.replace(/^https/, 'wss')}/api/v1/clusters/alice/dev/${family}/namespaces/demo/pods/${pod}/attach?stdout=true`,
        ['v5.channel.k8s.io'],
        { authorization: `token ${lab.alice.token}` },
        lab.caPem,
      )
      expect(s.ws.protocol).toBe('v5.channel.k8s.io')
      const line = new RegExp(`level=\\w+ pod=${pod} container=api seq=\\d+ msg=`)
      await s.until(() => line.test(channelText(s, 1)))
      // The caller leaving ends the member's session too.
      s.ws.close()
      await s.closed
      await eventually(() => member.sessions() === 0, 10_000)
    }
  })
})

describe("kubectl's SPDY upgrade (what kubectl speaks with its WebSocket gates off, or falls back to)", () => {
  test('port-forward and exec over SPDY → 400 naming the kubectl versions that work, and no upgrade reaches the member', async () => {
    const pod = await podOf('api')
    const before = seen.length
    const spdy = spawnKubectl(lab, lab.kubeconfig, { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false', KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' })
    const forward = spdy(['port-forward', '-n', 'demo', `pod/${pod}`, ':8080', '--address', '127.0.0.1'])
    const forwardErr = await new Response(forward.stderr).text()
    expect(await forward.exited).toBe(1)
    expect(forwardErr).toContain(UpgradeMessages.spdy)
    const exec = spdy(['exec', '-n', 'demo', pod, '--', 'echo', 'ok'])
    const execErr = await new Response(exec.stderr).text()
    expect(await exec.exited).not.toBe(0)
    expect(execErr).toContain(UpgradeMessages.spdy)
    expect(seen.slice(before).filter((line) => /\/(portforward|exec)/.test(line))).toEqual([])
  })
})

/** The descriptors this process holds (the platform and the member both run in it). */
const openDescriptors = () => readdirSync('/proc/self/fd').length

/** The descriptor count once it stops changing: sockets of an ended session close a few milliseconds after kubectl exits. */
const settledDescriptors = () =>
  eventually(async () => {
    const first = openDescriptors()
    // A wait that is the measure: "settled" means no change over a quarter second; no event says the last socket closed.
    await Bun.sleep(250)
    return openDescriptors() === first ? first : undefined
  }, 10_000)

describe('a held port-forward', () => {
  test("100 requests, each on its own connection, through a forward held for 60 s, then kubectl killed → the member's session ends, no descriptors or heap left behind", async () => {
    const pod = await podOf('api')
    const answer = new RegExp(`^pod ${pod} .* answered GET /request-\\d+\\n$`)
    // A first forward warms what stays by design (the member pool, the app's caches), so the baseline is steady.
    const warm = await portForward(spawn, `pod/${pod}`, 8080, ['-n', 'demo'])
    await holdWithRequests(`http://127.0.0.1:${warm.port}`, 0, 10, answer)
    await warm.stop('SIGKILL')
    await eventually(() => member.sessions() === 0, 10_000)
    const descriptors = await settledDescriptors()
    Bun.gc(true)
    const heap = process.memoryUsage().heapUsed
    // Held by requests, not by sleeping, for the 60 s a forward is expected to stay healthy (docs/api/proxy.md).
    const forward = await portForward(spawn, `pod/${pod}`, 8080, ['-n', 'demo'])
    const made = await holdWithRequests(`http://127.0.0.1:${forward.port}`, 60_000, 100, answer)
    expect(made).toBeGreaterThanOrEqual(100)
    expect(forward.output().match(/Handling connection for/g)?.length).toBeGreaterThanOrEqual(100)
    // Killed, not interrupted: no goodbye reaches the member, so only the platform's relay can end its session.
    await forward.stop('SIGKILL')
    await eventually(() => member.sessions() === 0, 10_000)
    expect(await settledDescriptors()).toBeLessThanOrEqual(descriptors)
    Bun.gc(true)
    // 100 connections' sessions, streams and buffers, if kept, would be far above this bound.
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(4 * 1024 * 1024)
  }, 120_000)
})
