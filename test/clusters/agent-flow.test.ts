/**
 * Per-stream flow control through one tunnel, measured as a user meets it: 50 watches and one
 * 300 MiB answer share the tunnel while small GETs go on; the small GETs stay fast and neither the
 * platform nor the agent holds the transfer in memory. The member is a small API server of the
 * test's own (TLS, a token), as the emulator keeps no 300 MiB object.
 */
import { afterAll, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { tempDir } from '../support/app'
import { stopWithScope } from '../support/children'
import { createTokenOnCommandLine, MAIN, startServer } from '../support/process'
import { eventually } from '../support/wait'

const MIB = 1024 * 1024
const TRANSFER_BYTES = 300 * MIB
const TOKEN = 'member-token'
const tls = await generateServerTls(['127.0.0.1'])
const chunk = new Uint8Array(MIB).fill(0x20)

/** An API server with facts for the hello, one small object, endless watches and one huge list. */
const member = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  tls: { cert: tls.certPem, key: tls.keyPem },
  idleTimeout: 0,
  fetch(request) {
    if (request.headers.get('authorization') !== `Bearer ${TOKEN}`) return new Response('{}', { status: 401 })
    const url = new URL(request.url)
    const json = (body: unknown) => Response.json(body)
    if (url.pathname === '/version') return json({ gitVersion: 'v1.31.0' })
    if (url.pathname === '/api/v1/namespaces/kube-system') return json({ metadata: { name: 'kube-system', uid: 'flow-member-uid' } })
    if (url.pathname === '/api/v1/nodes') return json({ items: [{}], metadata: {} })
    if (url.pathname === '/api/v1/namespaces/default/configmaps/small') return json({ kind: 'ConfigMap', metadata: { name: 'small' } })
    if (url.searchParams.get('watch') === 'true')
      return new Response(
        new ReadableStream({
          async pull(controller) {
            await Bun.sleep(500)
            controller.enqueue(new TextEncoder().encode('{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{}}}\n'))
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      )
    if (url.pathname === '/api/v1/namespaces/big/configmaps') {
      let sent = 0
      return new Response(
        new ReadableStream({
          pull(controller) {
            if (sent >= TRANSFER_BYTES) return controller.close()
            controller.enqueue(chunk)
            sent += chunk.byteLength
          },
        }),
        { headers: { 'content-type': 'application/json', 'content-length': String(TRANSFER_BYTES) } },
      )
    }
    return new Response('{}', { status: 404 })
  },
})
afterAll(() => member.stop(true))

const dataDir = tempDir()
const kubeconfig = join(dataDir, 'flow-member.kubeconfig')
writeFileSync(
  kubeconfig,
  YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'm',
        cluster: {
          server: `https://127.0.0.1:${member.port}`,
          'certificate-authority-data': Buffer.from(tls.caCertPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'm', user: { token: TOKEN } }],
    contexts: [{ name: 'm', context: { cluster: 'm', user: 'm' } }],
    'current-context': 'm',
  }),
)
// The platform in a process of its own, so that its memory is measured alone.
const platform = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
afterAll(async () => {
  platform.child.kill('SIGTERM')
  await platform.child.exited
})
const adminToken = createTokenOnCommandLine(dataDir, 'admin')
const asAdmin = (path: string, init: RequestInit = {}) =>
  fetch(`${platform.base}${path}`, { ...init, headers: { authorization: `token ${adminToken}`, 'content-type': 'application/json' } })
const connected = await asAdmin('/api/v1/clustersv2/admin/connect', { method: 'POST', body: JSON.stringify({ name: 'edge' }) })
const agentToken = ((await connected.json()) as { token: string }).token
const agent = stopWithScope(
  Bun.spawn([process.execPath, MAIN, 'agent', '--server', platform.base, '--kubeconfig', kubeconfig], {
    env: { ...process.env, PLATFORM_AGENT_TOKEN: agentToken },
    stdout: 'ignore',
    stderr: 'ignore',
  }),
)
await eventually(
  async () =>
    ((await (await asAdmin('/api/v1/clustersv2/admin/edge')).json()) as { status: { agent: { connected: boolean } } }).status.agent
      .connected,
  15_000,
)

const through = (path: string, signal?: AbortSignal) =>
  fetch(`${platform.base}/api/v1/clusters/admin/edge/k8s${path}`, { headers: { authorization: `token ${adminToken}` }, signal })

/** Peak resident memory of a process (VmHWM), in MiB. */
const peakMiB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024
}

test('50 watches and a 300 MiB answer through one tunnel → small GETs stay under 100 ms at p99; platform and agent memory bounded', async () => {
  const watches = new AbortController()
  const opened = await Promise.all(
    Array.from({ length: 50 }, (_, i) => through(`/api/v1/namespaces/w${i}/configmaps?watch=true`, watches.signal)),
  )
  expect(opened.every((res) => res.status === 200)).toBe(true)
  const drained = opened.map((res) => res.body!.pipeTo(new WritableStream()).catch(() => undefined))
  const platformBefore = peakMiB(platform.child.pid)
  const agentBefore = peakMiB(agent.pid)

  let received = 0
  const transfer = (async () => {
    const res = await through('/api/v1/namespaces/big/configmaps')
    const reader = res.body!.getReader()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      received += value.byteLength
    }
  })()

  const latencies: number[] = []
  let transferring = true
  void transfer.finally(() => {
    transferring = false
  })
  while (transferring || latencies.length < 50) {
    const started = performance.now()
    const res = await through('/api/v1/namespaces/default/configmaps/small')
    await res.arrayBuffer()
    expect(res.status).toBe(200)
    latencies.push(performance.now() - started)
  }
  await transfer
  watches.abort()
  await Promise.all(drained)

  latencies.sort((a, b) => a - b)
  const p99 = latencies[Math.floor(latencies.length * 0.99)]!
  const figures = {
    smallGets: latencies.length,
    p50Ms: latencies[Math.floor(latencies.length / 2)]!.toFixed(1),
    p99Ms: p99.toFixed(1),
    transferredMiB: received / MIB,
    platformPeakMiB: Math.round(peakMiB(platform.child.pid)),
    platformPeakGrowthMiB: Math.round(peakMiB(platform.child.pid) - platformBefore),
    agentPeakMiB: Math.round(peakMiB(agent.pid)),
    agentPeakGrowthMiB: Math.round(peakMiB(agent.pid) - agentBefore),
  }
  console.log('agent tunnel under load:', JSON.stringify(figures))
  expect(received).toBe(TRANSFER_BYTES)
  expect(p99).toBeLessThan(100)
  // The transfer moves through windows of 256 KiB: neither side holds it.
  expect(figures.platformPeakGrowthMiB).toBeLessThan(100)
  expect(figures.agentPeakGrowthMiB).toBeLessThan(100)
}, 120_000)
