// The cluster proxy against the member cluster direct and against nginx, in one run on this machine:
// GET of one object and of a 500-item list, measured with wrk (Debian `wrk`, `nginx`); then many
// watches and followed logs held through the proxy while the platform's RSS is watched. A bare Bun
// relay over the same client (bench/bare-relay.ts) shows how much of the gap to nginx is the runtime.
// With --workers 1,2 each proxy runs as that many processes on one port in turn (the platform as
// `serve --workers N`, the bare relay with reusePort × N, nginx with worker_processes N).
// Usage: npm run bench:proxy [-- --duration 5 --connections 20 --hold 60 --watches 200 --logs 50 --workers 1,2]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { MEMBER_CASES, startBenchMember } from './member'
import {
  freePort,
  type Measured,
  measureCpu,
  platformCommand,
  platformEnv,
  requireTools,
  rssMbOf,
  startBare,
  startNginx,
  startPlatform,
  type Target,
  workerCounts,
} from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    hold: { type: 'string', default: '60' },
    watches: { type: 'string', default: '200' },
    logs: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1' },
  },
})
requireTools('wrk', 'nginx')
const counts = workerCounts(values.workers)

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-proxy-'))
const step = (text: string) => process.stderr.write(`… ${text}\n`)
step('starting the member cluster with 500 ConfigMaps')
const { member, memberFetch } = await startBenchMember({ logIntervalMs: 1000 })
const memberUrl = new URL(member.url)
const asMember = { authorization: `Bearer ${member.token}` }

// The platform as its own processes, so their CPU and RSS are their own.
const env = platformEnv(dir)
const run = platformCommand(env)
writeFileSync(join(dir, 'member.kubeconfig'), member.kubeconfig())
writeFileSync(join(dir, 'ca.pem'), member.caCertPem!)
// nginx as a reverse proxy to the same member, TLS upstream verified against its CA, keep-alive.
const nginxSite = {
  http: `upstream member { server ${memberUrl.host}; keepalive 64; }`,
  location: `      proxy_pass https://member;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer ${member.token}";
      # Verified like our proxy verifies: against the member's CA. nginx checks names as DNS names
      # only, so it checks the certificate's DNS name (localhost) rather than the IP it connects to.
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate ${dir}/ca.pem;
      proxy_ssl_name localhost;
      proxy_ssl_server_name on;
      proxy_ssl_session_reuse on;
      proxy_buffering off;`,
}

// CPU time per request of each proxy (its processes, from /proc) and of the member (this process,
// which runs the emulator): a figure that says what a request costs even when other work on the
// machine moves req/s around.
interface WithMember extends Measured {
  memberUs: number
}
const measureWithMember = async (url: string, headers: Record<string, string>, target: Pick<Target, 'pids'>): Promise<WithMember> => {
  const memberBefore = process.cpuUsage()
  const figures = await measureCpu(url, headers, values, target)
  const used = process.cpuUsage(memberBefore)
  return { ...figures, memberUs: (used.user + used.system) / figures.requests }
}
const fmt = (f: WithMember, proxied = true) =>
  `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(6)} ms  CPU/request: ${proxied ? `proxy ${f.cpuUs.toFixed(0)} µs, ` : ''}member ${f.memberUs.toFixed(0)} µs`
console.log(
  `wrk -t2 -c${values.connections} -d${values.duration}s per target, same machine, one run (${navigator.hardwareConcurrency} cores shared by wrk, the proxy and the member)`,
)
// Each case: the member's path, and the same object on the spec's route (…/proxy/{group}/{version}/…), which adds an ETag.
const cases = MEMBER_CASES.map(([name, path]) => [name, path, path.replace(/^\/api\/v1\//, '/core/v1/')] as const)
const noProcesses = { pids: () => [] }
let token: string | undefined
/** Per process count and case: what each proxy measured. */
const results: { workers: number; name: string; ours: WithMember; nginx: WithMember; bare: WithMember }[] = []
for (const [index, workers] of counts.entries()) {
  step(`starting the proxies as ${workers} process(es) each`)
  const platform = await startPlatform(workers, freePort(), env)
  if (!token) {
    token = await run('admin', 'create-token', '--username', 'admin')
    await run('cluster', 'import', '--owner', 'admin', '--name', 'dev', '--kubeconfig', join(dir, 'member.kubeconfig'))
  }
  const nginx = await startNginx(dir, workers, freePort(), nginxSite)
  const bare = await startBare('bare-relay.ts', workers, freePort(), { MEMBER_KUBECONFIG: member.kubeconfig() })
  const ours = `http://127.0.0.1:${platform.port}/api/v1/clusters/admin/dev/k8s`
  const spec = `http://127.0.0.1:${platform.port}/api/v1/clusters/admin/dev/proxy`
  console.log(`\n${workers} process${workers === 1 ? '' : 'es'} per proxy`)
  for (const [name, path, specPath] of cases) {
    const direct = await measureWithMember(`${member.url}${path}`, asMember, noProcesses)
    const proxy = await measureWithMember(`${ours}${path}`, { authorization: `token ${token}` }, platform)
    const specFig = await measureWithMember(`${spec}${specPath}`, { authorization: `token ${token}` }, platform)
    const nginxFig = await measureWithMember(`http://127.0.0.1:${nginx.port}${path}`, {}, nginx)
    const bareFig = await measureWithMember(`http://127.0.0.1:${bare.port}${path}`, {}, bare)
    results.push({ workers, name, ours: proxy, nginx: nginxFig, bare: bareFig })
    console.log(`\n${name}`)
    console.log(`  direct to the member  ${fmt(direct, false)}`)
    console.log(`  through our proxy     ${fmt(proxy)}`)
    console.log(`  our spec route (ETag) ${fmt(specFig)}`)
    console.log(`  through nginx         ${fmt(nginxFig)}`)
    console.log(`  bare Bun relay        ${fmt(bareFig)}   (the floor: same client, no checks)`)
    console.log(
      `  ours / nginx: ${(proxy.rps / nginxFig.rps).toFixed(2)}x req/s, spec route / nginx ${(specFig.rps / nginxFig.rps).toFixed(2)}x (bare Bun relay / nginx: ${(bareFig.rps / nginxFig.rps).toFixed(2)}x); added p50 over direct: ours ${(proxy.p50 - direct.p50).toFixed(2)} ms, nginx ${(nginxFig.p50 - direct.p50).toFixed(2)} ms`,
    )
  }
  await nginx.stop()
  await bare.stop()
  if (index === 0) await holdStreams(`${ours}`, platform)
  await platform.stop()
}

if (counts.length > 1) {
  console.log(`\nreq/s and CPU per request with N processes against ${counts[0]}`)
  for (const r of results.filter((x) => x.workers !== counts[0])) {
    const base = results.find((x) => x.workers === counts[0] && x.name === r.name)!
    const line = (k: 'ours' | 'nginx' | 'bare') =>
      `${k} ${(r[k].rps / base[k].rps).toFixed(2)}x req/s, CPU ${base[k].cpuUs.toFixed(0)} → ${r[k].cpuUs.toFixed(0)} µs`
    console.log(`  ${r.name}, ${r.workers} vs ${counts[0]}: ${line('ours')}; ${line('nginx')}; ${line('bare')}`)
  }
}
await member.stop()
rmSync(dir, { recursive: true, force: true })
process.exit(0)

/** Watches and followed logs held through the proxy at `ours`, the platform's RSS before and after. */
async function holdStreams(ours: string, platform: Target): Promise<void> {
  const rss = () => rssMbOf(platform.pids())
  const pods = ((await (await memberFetch('/api/v1/namespaces/demo/pods')).json()) as { items: { metadata: { name: string } }[] }).items
  const before = rss()
  const controllers: AbortController[] = []
  let bytes = 0
  const hold = (path: string) => {
    const controller = new AbortController()
    controllers.push(controller)
    void fetch(`${ours}${path}`, { headers: { authorization: `token ${token}` }, signal: controller.signal })
      .then(async (res) => {
        const body = res.body!.getReader()
        for (let read = await body.read(); !read.done; read = await body.read()) bytes += read.value.byteLength
      })
      .catch(() => undefined)
  }
  for (let i = 0; i < Number(values.watches); i++) hold('/api/v1/namespaces/demo/configmaps?watch=true')
  for (let i = 0; i < Number(values.logs); i++) hold(`/api/v1/namespaces/demo/pods/${pods[i % pods.length]!.metadata.name}/log?follow=true`)
  let peak = before
  const holdUntil = Date.now() + Number(values.hold) * 1000
  while (Date.now() < holdUntil) {
    await Bun.sleep(1000)
    peak = Math.max(peak, rss())
  }
  const held = rss()
  for (const c of controllers) c.abort()
  console.log(
    `\n${values.watches} watches + ${values.logs} followed logs held ${values.hold} s through the proxy: platform RSS ${before.toFixed(0)} MB → ${held.toFixed(0)} MB (peak ${peak.toFixed(0)} MB, growth ${(held - before).toFixed(1)} MB), ${(bytes / 1024).toFixed(0)} KiB streamed`,
  )
}
