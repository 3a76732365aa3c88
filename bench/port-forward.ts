// kubectl port-forward through the platform, held --hold seconds (60 by default) with requests made one
// after another all along (at least --requests); the platform runs as its own process over TLS, so its
// open descriptors and RSS (/proc/<pid>) are its own: before the forward, during it, and once it ended.
// Usage: npm run bench:port-forward [-- --hold 60 --requests 100]

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startEmulator } from '../src/kube-emulator'
import { holdWithRequests, portForward } from '../test/support/kubectl-streams'
import { freePort, platformCommand, ROOT, rssMbOf, startPlatform, tlsPlatformEnv } from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { hold: { type: 'string', default: '60' }, requests: { type: 'string', default: '100' } },
})
const holdMs = Number(values.hold) * 1000
const requests = Number(values.requests)

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-port-forward-'))
const step = (text: string) => process.stderr.write(`… ${text}\n`)

const member = await startEmulator({ tls: true, seed: true })
const port = freePort()
const { env, base, caPem } = await tlsPlatformEnv(dir, port)

step('starting the platform')
const platform = await startPlatform(1, port, env)
const [pid] = platform.pids()
const cli = platformCommand(env)
step('token, cluster import and kubeconfig')
const token = await cli('admin', 'create-token', '--username', 'admin')
writeFileSync(join(dir, 'member.kubeconfig'), member.kubeconfig())
await cli('cluster', 'import', '--owner', 'admin', '--name', 'dev', '--kubeconfig', join(dir, 'member.kubeconfig'))
const kubeconfig = await fetch(`${base}/api/v1/clustersv2/admin/dev/kubeconfig`, {
  headers: { authorization: `token ${token}` },
  tls: { ca: caPem },
} as RequestInit)
if (!kubeconfig.ok) throw new Error(`kubeconfig: ${kubeconfig.status} ${await kubeconfig.text()}`)
writeFileSync(join(dir, 'platform.kubeconfig'), await kubeconfig.text())
const kubectl = (args: string[]) =>
  Bun.spawn([join(ROOT, '.tools/bin/kubectl'), '--kubeconfig', join(dir, 'platform.kubeconfig'), ...args], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })

/** The platform's open descriptors and resident memory. */
const sample = () => ({ fds: readdirSync(`/proc/${pid}/fd`).length, rssMiB: rssMbOf([pid!]) })
/** A sample once the descriptor count stops changing (sockets close a little after kubectl exits). */
async function settled() {
  for (let previous = -1; ; await Bun.sleep(500)) {
    const now = sample()
    if (now.fds === previous) return now
    previous = now.fds
  }
}

const answer = /answered GET \/request-\d+\n$/
step('a warm-up forward (10 requests), so what stays by design is already there')
const warm = await portForward(kubectl, 'deploy/api', 8080, ['-n', 'demo'])
await holdWithRequests(`http://127.0.0.1:${warm.port}`, 0, 10, answer)
await warm.stop()
const before = await settled()

step(`holding a forward ${values.hold} s with at least ${requests} requests`)
const forward = await portForward(kubectl, 'deploy/api', 8080, ['-n', 'demo'])
const during: ReturnType<typeof sample>[] = []
const sampler = setInterval(() => during.push(sample()), 5_000)
const started = performance.now()
const made = await holdWithRequests(`http://127.0.0.1:${forward.port}`, holdMs, requests, answer)
const seconds = (performance.now() - started) / 1000
clearInterval(sampler)
await forward.stop()
const after = await settled()

const peak = during.reduce((p, s) => ({ fds: Math.max(p.fds, s.fds), rssMiB: Math.max(p.rssMiB, s.rssMiB) }), before)
console.log(
  `kubectl port-forward through the platform (TLS), held ${seconds.toFixed(1)} s: ${made} requests, ${(made / seconds).toFixed(0)} req/s`,
)
console.log(
  `platform descriptors: before ${before.fds}, peak during ${peak.fds}, after ${after.fds} (left behind: ${after.fds - before.fds})`,
)
console.log(
  `platform RSS: before ${before.rssMiB.toFixed(1)} MiB, peak during ${peak.rssMiB.toFixed(1)} MiB, after ${after.rssMiB.toFixed(1)} MiB`,
)
await platform.stop()
await member.stop()
rmSync(dir, { recursive: true, force: true })
process.exit(after.fds > before.fds ? 1 : 0)
