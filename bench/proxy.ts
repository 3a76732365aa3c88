// The cluster proxy against the member cluster direct and against nginx, in one run on this machine:
// GET of one object and of a 500-item list, measured with wrk (Debian `wrk`, `nginx`); then many
// watches and followed logs held through the proxy while the platform's RSS is watched. A bare Bun
// relay over the same client (bench/bare-relay.ts) shows how much of the gap to nginx is the runtime.
// Usage: npm run bench:proxy [-- --duration 5 --connections 20 --hold 60 --watches 200 --logs 50]

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startEmulator } from '../src/kube-emulator'
import { type Figures, wrk as measure } from './wrk'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    hold: { type: 'string', default: '60' },
    watches: { type: 'string', default: '200' },
    logs: { type: 'string', default: '50' },
  },
})

for (const tool of ['wrk', 'nginx']) {
  if (Bun.spawnSync(['which', tool], { env: { PATH: `${process.env.PATH}:/usr/sbin` } }).exitCode !== 0) {
    console.error(`${tool} is not installed: apt-get install -y ${tool}`)
    process.exit(2)
  }
}

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-proxy-'))
const root = resolve(import.meta.dir, '..')
const member = await startEmulator({ tls: true, seed: true, logIntervalMs: 1000 })
const memberUrl = new URL(member.url)
const asMember = { authorization: `Bearer ${member.token}` }
const memberFetch = (path: string, init: RequestInit = {}) =>
  fetch(`${member.url}${path}`, {
    ...init,
    headers: { ...asMember, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    tls: { ca: member.caCertPem },
  } as RequestInit)

const step = (text: string) => process.stderr.write(`… ${text}\n`)
step('member cluster up; creating 500 ConfigMaps')
// 500 ConfigMaps in their own namespace: the list case.
await memberFetch('/api/v1/namespaces', { method: 'POST', body: JSON.stringify({ metadata: { name: 'bench' } }) })
for (let i = 0; i < 500; i += 50)
  await Promise.all(
    Array.from({ length: 50 }, (_, j) =>
      memberFetch('/api/v1/namespaces/bench/configmaps', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: `cm-${i + j}` }, data: { index: String(i + j) } }),
      }),
    ),
  )

step('starting the platform')
// The platform as its own process, so its RSS is its own.
const env = {
  ...process.env,
  PLATFORM_DATA_DIR: join(dir, 'data'),
  PLATFORM_ADMIN_PASSWORD: 'bench-password-1',
  PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true',
  PLATFORM_SANDBOX_CLUSTER: 'false',
  PLATFORM_REQUEST_LOG: 'false',
}
const main = join(root, 'src/main.ts')
/** Reads a child's stdout until `pattern` matches, then lets the rest drain; the match's first group. */
async function readUntil(child: { stdout: ReadableStream<Uint8Array> }, pattern: RegExp, what: string): Promise<string> {
  const reader = child.stdout.getReader()
  let seen = ''
  let match: RegExpExecArray | null
  while (!(match = pattern.exec(seen))) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${what} did not start: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined)
  return match[1]!
}
const platform = Bun.spawn([process.execPath, main, 'serve', '--port', '0', '--host', '127.0.0.1'], {
  env,
  stdout: 'pipe',
  stderr: 'inherit',
})
const platformPort = await readUntil(platform, /"event":"listening".*"url":"http:\/\/[^:]+:(\d+)"/, 'the platform')
const run = async (...args: string[]) => {
  const child = Bun.spawn([process.execPath, main, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`${args.join(' ')}: ${err}`)
  return out.trim()
}
step('token and cluster import')
const token = await run('admin', 'create-token', '--username', 'admin')
writeFileSync(join(dir, 'member.kubeconfig'), member.kubeconfig())
await run('cluster', 'import', '--owner', 'admin', '--name', 'dev', '--kubeconfig', join(dir, 'member.kubeconfig'))

// nginx as a reverse proxy to the same member, TLS upstream verified against its CA, keep-alive.
writeFileSync(join(dir, 'ca.pem'), member.caCertPem!)
const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
const nginxPort = probe.port!
probe.stop(true)
writeFileSync(
  join(dir, 'nginx.conf'),
  `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream member { server ${memberUrl.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${nginxPort};
    location / {
      proxy_pass https://member;
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
      proxy_buffering off;
    }
  }
}
`,
)
// The floor: a bare Bun relay over the same client, no checks at all (bench/bare-relay.ts).
const bare = Bun.spawn([process.execPath, join(root, 'bench/bare-relay.ts')], {
  env: { ...process.env, MEMBER_KUBECONFIG: member.kubeconfig() },
  stdout: 'pipe',
  stderr: 'inherit',
})
const barePort = await readUntil(bare, /^(\d+)\n/, 'the bare relay')
// Whatever happens, no nginx or platform process outlives the bench.
const children: { kill(): void }[] = [platform, bare]
process.on('exit', () => {
  for (const child of children) child.kill()
})
const nginx = Bun.spawn(['nginx', '-c', join(dir, 'nginx.conf'), '-p', dir], {
  env: { PATH: `${process.env.PATH}:/usr/sbin` },
  stdout: 'ignore',
  stderr: 'inherit',
})
children.push(nginx)
for (let i = 0; i < 50; i++) {
  const ok = await fetch(`http://127.0.0.1:${nginxPort}/version`).then(
    (r) => r.ok,
    () => false,
  )
  if (ok) break
  await Bun.sleep(100)
}

step('nginx up')

// CPU time per request of each proxy (from /proc: the platform's process, nginx's master and
// workers) and of the member (this process, which runs the emulator): a figure that says what a
// request costs even when other work on the machine moves req/s around.
const ticksPerSecond = Number(new TextDecoder().decode(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout).trim()) || 100
const cpuMsOf = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return sum + ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
  }, 0)
const nginxPids = () => [
  nginx.pid,
  ...readFileSync(`/proc/${nginx.pid}/task/${nginx.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
]
interface Measured extends Figures {
  proxyUs: number
  memberUs: number
}
const measureCpu = async (url: string, headers: Record<string, string>, pids: () => number[]): Promise<Measured> => {
  const proxyBefore = cpuMsOf(pids())
  const memberBefore = process.cpuUsage()
  const figures = await measure(url, headers, values)
  const member = process.cpuUsage(memberBefore)
  return {
    ...figures,
    proxyUs: ((cpuMsOf(pids()) - proxyBefore) * 1000) / figures.requests,
    memberUs: (member.user + member.system) / figures.requests,
  }
}
const ours = `http://127.0.0.1:${platformPort}/api/v1/clusters/admin/dev/k8s`
const viaNginx = `http://127.0.0.1:${nginxPort}`
const fmt = (f: Measured, proxied = true) =>
  `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(6)} ms  CPU/request: ${proxied ? `proxy ${f.proxyUs.toFixed(0)} µs, ` : ''}member ${f.memberUs.toFixed(0)} µs`
console.log(
  `wrk -t2 -c${values.connections} -d${values.duration}s per target, same machine, one run (2 cores shared by wrk, the proxy and the member)`,
)
// Each case: the member's path, and the same object on the spec's route (…/proxy/{group}/{version}/…), which adds an ETag.
const cases: [string, string, string][] = [
  ['GET one object', '/api/v1/namespaces/bench/configmaps/cm-7', '/core/v1/namespaces/bench/configmaps/cm-7'],
  ['GET a 500-item list', '/api/v1/namespaces/bench/configmaps', '/core/v1/namespaces/bench/configmaps'],
]
const spec = `http://127.0.0.1:${platformPort}/api/v1/clusters/admin/dev/proxy`
for (const [name, path, specPath] of cases) {
  const direct = await measureCpu(`${member.url}${path}`, asMember, () => [])
  const proxy = await measureCpu(`${ours}${path}`, { authorization: `token ${token}` }, () => [platform.pid])
  const specFig = await measureCpu(`${spec}${specPath}`, { authorization: `token ${token}` }, () => [platform.pid])
  const nginxFig = await measureCpu(`${viaNginx}${path}`, {}, nginxPids)
  const bareFig = await measureCpu(`http://127.0.0.1:${barePort}${path}`, {}, () => [bare.pid])
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

// Held streams: watches and followed logs through the proxy, the platform's RSS before and after.
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${platform.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
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

nginx.kill()
bare.kill()
platform.kill()
await member.stop()
rmSync(dir, { recursive: true, force: true })
process.exit(0)
