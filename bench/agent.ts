// Cluster agents (docs/agents.md): what the tunnel costs and what many idle agents cost.
// 1. The same emulator reached two ways through the platform's kubectl endpoint, measured with wrk: as an
//    agent cluster (an agent process, `bun src/main.ts agent --kubeconfig …`) and imported directly
//    (private endpoints allowed). req/s, p50/p99, CPU per request of the platform, the agent and the member.
// 2. --agents simulated idle agents (this process: WebSocket clients speaking the hello and answering pings
//    with the tunnel's own frames and mux), each for its own agent cluster: the platform's RSS before and
//    after, and its CPU over --idle seconds with and without them, extrapolated to 5,000 clusters.
// The platform serves TLS with its own CA, as agents and kubectl reach it (--plain: HTTP, to see what the
// tunnel's own TLS costs).
// Usage: npm run bench:agent [-- --duration 5 --connections 20 --agents 500 --idle 60 --plain --profile DIR]

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BunWebSocket, clientTransport } from '../src/net/tunnel/client-socket'
import { encode, Frame } from '../src/net/tunnel/frames'
import { Tunnel } from '../src/net/tunnel/mux'
import { MEMBER_CASES, startBenchMember } from './member'
import {
  cpuMsOf,
  freePort,
  MAIN,
  type Measured,
  measureCpu,
  platformCommand,
  platformEnv,
  requireTools,
  rssMbOf,
  startPlatform,
  tlsPlatformEnv,
} from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    agents: { type: 'string', default: '500' },
    idle: { type: 'string', default: '60' },
    plain: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
})
requireTools('wrk')
const step = (text: string) => process.stderr.write(`… ${text}\n`)
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-agent-'))

step('starting the member cluster with 500 ConfigMaps')
const { member } = await startBenchMember()
writeFileSync(join(dir, 'member.kubeconfig'), member.kubeconfig())

const port = freePort()
// --plain: the platform serves HTTP (as behind an operator's TLS proxy), so the tunnel has no TLS of its own.
const {
  env: baseEnv,
  base,
  caPem,
  caFile,
} = values.plain
  ? {
      env: { ...platformEnv(dir), PLATFORM_PUBLIC_URL: `http://127.0.0.1:${port}` },
      base: `http://127.0.0.1:${port}`,
      caPem: undefined,
      caFile: undefined,
    }
  : await tlsPlatformEnv(dir, port)
// --profile DIR: the platform and the agent write a CPU profile each (markdown) into DIR as they exit.
const profiling: Record<string, string> = values.profile ? { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${values.profile}` } : {}
const env = { ...baseEnv, ...profiling }
step(`starting the platform (one process, ${values.plain ? 'plain HTTP' : 'TLS'})`)
const platform = await startPlatform(1, port, env)
const cli = platformCommand(baseEnv)
const token = await cli('admin', 'create-token', '--username', 'admin')
const asAdmin = { authorization: `token ${token}` }
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...asAdmin, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    tls: { ca: caPem },
  } as RequestInit)
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<Record<string, unknown>>
}

// One owner may register a cluster (a kube-system uid) once: the direct import goes to an org.
step('importing the member directly (org bench) and connecting it as an agent cluster (admin/edge)')
await api('POST', '/api/v1/orgs', { username: 'bench' })
await cli('cluster', 'import', '--owner', 'bench', '--name', 'direct', '--kubeconfig', join(dir, 'member.kubeconfig'))
const { token: agentToken } = (await api('POST', '/api/v1/clustersv2/admin/connect', { name: 'edge' })) as { token: string }
const agent = Bun.spawn(
  [
    process.execPath,
    MAIN,
    'agent',
    '--server',
    base,
    '--kubeconfig',
    join(dir, 'member.kubeconfig'),
    ...(caFile ? ['--ca-file', caFile] : []),
  ],
  {
    env: { ...process.env, ...profiling, PLATFORM_AGENT_TOKEN: agentToken },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  },
)
process.on('exit', () => agent.kill('SIGKILL'))
const direct = `${base}/api/v1/clusters/bench/direct/k8s`
const throughAgent = `${base}/api/v1/clusters/admin/edge/k8s`
await until(async () => (await fetch(`${throughAgent}/version`, { headers: asAdmin, tls: { ca: caPem } } as RequestInit)).ok, 'the agent')

// CPU per request of the platform (measureCpu), the agent process and the member (this process).
interface Path extends Measured {
  agentUs: number
  memberUs: number
}
const load = { connections: values.connections, duration: values.duration }
async function measure(url: string): Promise<Path> {
  const agentBefore = cpuMsOf([agent.pid])
  const memberBefore = process.cpuUsage()
  const figures = await measureCpu(url, asAdmin, load, platform)
  const memberUsed = process.cpuUsage(memberBefore)
  return {
    ...figures,
    agentUs: ((cpuMsOf([agent.pid]) - agentBefore) * 1000) / figures.requests,
    memberUs: (memberUsed.user + memberUsed.system) / figures.requests,
  }
}
const fmt = (f: Path, viaAgent: boolean) =>
  `${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(6)} ms  CPU/request: platform ${f.cpuUs.toFixed(0)} µs${viaAgent ? `, agent ${f.agentUs.toFixed(0)} µs` : ''}, member ${f.memberUs.toFixed(0)} µs`

console.log(`${new Date().toISOString()}  load average ${loadAverage()}`)
console.log(
  `wrk -t2 -c${values.connections} -d${values.duration}s over ${values.plain ? 'plain HTTP' : 'TLS'} to the platform's kubectl endpoint, same emulator both ways (${navigator.hardwareConcurrency} cores shared by wrk, the platform, the agent and the member)`,
)
step('warming both paths')
for (const url of [direct, throughAgent]) await measureCpu(`${url}${MEMBER_CASES[0]![1]}`, asAdmin, { ...load, duration: '1' }, platform)
for (const [name, path] of MEMBER_CASES) {
  const d = await measure(`${direct}${path}`)
  const a = await measure(`${throughAgent}${path}`)
  const ratio = a.rps / d.rps
  const addedP50 = a.p50 - d.p50
  console.log(`\n${name}`)
  console.log(`  imported (direct)  ${fmt(d, false)}`)
  console.log(`  through the agent  ${fmt(a, true)}`)
  console.log(
    `  agent / direct: ${ratio.toFixed(2)}x req/s (goal ≥ 0.7: ${ratio >= 0.7 ? 'met' : 'NOT met'}), added p50 ${addedP50.toFixed(2)} ms (goal ≤ 1: ${addedP50 <= 1 ? 'met' : 'NOT met'}), CPU per request platform ${(a.cpuUs / d.cpuUs).toFixed(2)}x, platform + agent ${((a.cpuUs + a.agentUs) / d.cpuUs).toFixed(2)}x`,
  )
}
agent.kill('SIGTERM')
await agent.exited

// 2. Many idle agents.
const count = Number(values.agents)
const idleMs = Number(values.idle) * 1000
step(`connecting ${count} agent clusters through the API`)
const tokens: string[] = []
for (let i = 0; i < count; i += 10)
  tokens.push(
    ...(await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const answer = (await api('POST', '/api/v1/clustersv2/admin/connect', { name: `idle-${i + j}` })) as { token: string }
        return answer.token
      }),
    )),
  )
// A fresh process, so the heap the wrk runs and the connects left does not blur what the tunnels take.
await platform.stop()
const idlePlatform = await startPlatform(1, port, env)
const [platformPid] = idlePlatform.pids()
const settle = async () => {
  await Bun.sleep(5_000)
  return rssMbOf([platformPid!])
}
const idleCpu = async () => {
  const before = cpuMsOf([platformPid!])
  await Bun.sleep(idleMs)
  return ((cpuMsOf([platformPid!]) - before) / idleMs) * 100
}
step(`the platform idle ${values.idle} s without agents`)
const rssBefore = await settle()
const cpuWithout = await idleCpu()

step(`${count} simulated agents connecting`)
const tunnels: Tunnel[] = []
const ticker = setInterval(() => {
  for (const tunnel of tunnels) tunnel.tick(Date.now())
}, 1_000)
for (let i = 0; i < count; i += 25)
  await Promise.all(tokens.slice(i, i + 25).map((t) => idleAgent(t).then((tunnel) => tunnels.push(tunnel))))
const rssAfter = await settle()
step(`the platform idle ${values.idle} s with ${count} agents`)
const cpuWith = await idleCpu()
const rssEnd = rssMbOf([platformPid!])
const lost = tunnels.filter((t) => t.closedReason !== undefined).length
clearInterval(ticker)

const perTunnelKb = ((rssAfter - rssBefore) * 1024) / count
const cpuPerTunnel = (cpuWith - cpuWithout) / count
console.log(
  `\n${count} idle agents on one platform process (${lost} lost during the idle window):` +
    `\n  platform RSS ${rssBefore.toFixed(0)} MB → ${rssAfter.toFixed(0)} MB: ${perTunnelKb.toFixed(0)} KB per idle tunnel; ${rssEnd.toFixed(0)} MB at the end of the idle window` +
    `\n  platform CPU idle over ${values.idle} s: ${cpuWithout.toFixed(2)} % of a core without agents, ${cpuWith.toFixed(2)} % with them (pings every 5 s, rows refreshed every 5 s)` +
    `\n  5,000 agent clusters (extrapolated): RSS +${((perTunnelKb * 5000) / 1024).toFixed(0)} MB, CPU ${(cpuWithout + cpuPerTunnel * 5000).toFixed(1)} % of a core idle`,
)
console.log(`load average at the end ${loadAverage()}`)
await idlePlatform.stop()
await member.stop()
rmSync(dir, { recursive: true, force: true })
process.exit(0)

/** One simulated agent: the hello of a cluster of its own (a fresh kube-system uid), then a tunnel that answers pings and refuses streams. */
function idleAgent(agentTokenOf: string): Promise<Tunnel> {
  const hello = {
    agentVersion: 'bench',
    uid: crypto.randomUUID(),
    kubernetesVersion: 'v1.31.0',
    nodeCount: 1,
    server: member.url,
    caData: member.caCertPem ?? '',
    tlsServerName: '',
    credential: { token: member.token },
  }
  const socket = new BunWebSocket(`${base.replace(/^http/, 'ws')}/api/v1/agent/connect`, {
    headers: { authorization: `Bearer ${agentTokenOf}` },
    ...(caPem ? { tls: { ca: caPem } } : {}),
  })
  socket.binaryType = 'arraybuffer'
  return new Promise((resolve, reject) => {
    let tunnel: Tunnel | undefined
    socket.addEventListener('open', () => socket.send(encode(Frame.hello, 0, new TextEncoder().encode(JSON.stringify(hello)))))
    socket.addEventListener('message', (event) => {
      const message = new Uint8Array(event.data as ArrayBuffer)
      if (tunnel) return tunnel.receive(message)
      tunnel = new Tunnel(clientTransport(socket), {
        role: 'agent',
        now: Date.now,
        incoming: (_stream, _accept, refuse) => refuse('a bench agent dials nothing'),
      })
      resolve(tunnel)
    })
    socket.addEventListener('close', (event) => {
      tunnel?.close(event.reason || 'closed')
      reject(new Error(`agent closed before the welcome: ${event.code} ${event.reason}`))
    })
  })
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check().catch(() => false)) return
    await Bun.sleep(100)
  }
  throw new Error(`${what} did not come up in 30 s`)
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', ')
}
