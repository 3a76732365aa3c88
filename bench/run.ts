// One-command benchmark: token-authenticated GET /api/v1/user on the platform against a bare
// Bun.serve JSON answer and nginx returning the same JSON, on the same machine in the same run,
// measured with wrk (Debian `wrk`, `nginx`). With --workers 1,2 each target runs as that many
// processes on one port in turn (the platform as `serve --workers N`, the bare server with reusePort
// × N, nginx with worker_processes N). Prints req/s, p50/p99, CPU per request and the ratios.
// Usage: npm run bench [-- --duration 10 --connections 50 --rounds 3 --workers 1,2]

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  freePort,
  MAIN,
  type Measured,
  measureCpu,
  median,
  platformEnv,
  requireTools,
  startBare,
  startNginx,
  startPlatform,
  type Target,
  workerCounts,
} from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    workers: { type: 'string', default: '1' },
  },
})
requireTools('wrk', 'nginx')
const counts = workerCounts(values.workers)

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-'))
const env = platformEnv(dir)

async function createToken(): Promise<string> {
  const child = Bun.spawn([process.execPath, MAIN, 'admin', 'create-token', '--username', 'admin'], { env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`admin create-token: ${err}`)
  return out.trim()
}

interface Round {
  bare: Measured
  nginx: Measured
  user: Measured
}
const fmt = (f: Measured) =>
  `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2)} ms  p99 ${f.p99.toFixed(2)} ms  CPU ${f.cpuUs.toFixed(0)} µs/req`
console.log(
  `wrk -t2 -c${values.connections} -d${values.duration}s, ${values.rounds} rounds per process count, same machine (${navigator.hardwareConcurrency} cores shared by wrk and the servers), alternating targets`,
)
let token: string | undefined
const results = new Map<number, Round[]>()
for (const workers of counts) {
  const targets: Target[] = [
    await startPlatform(workers, freePort(), env),
    await startBare('bare-json.ts', workers, freePort()),
    await startNginx(dir, workers, freePort(), {
      location: `      default_type application/json;\n      return 200 '{"hello":"world","id":1}';`,
    }),
  ]
  const [platform, bare, nginx] = targets as [Target, Target, Target]
  token ??= await createToken()
  const rounds: Round[] = []
  console.log(`\n${workers} process${workers === 1 ? '' : 'es'} per target`)
  for (let round = 1; round <= Number(values.rounds); round++) {
    const r: Round = {
      bare: await measureCpu(`http://127.0.0.1:${bare.port}/`, {}, values, bare),
      nginx: await measureCpu(`http://127.0.0.1:${nginx.port}/`, {}, values, nginx),
      user: await measureCpu(`http://127.0.0.1:${platform.port}/api/v1/user`, { authorization: `token ${token}` }, values, platform),
    }
    rounds.push(r)
    console.log(
      `round ${round}: Bun.serve JSON ${fmt(r.bare)}\n         nginx JSON     ${fmt(r.nginx)}\n         GET /api/v1/user ${fmt(r.user)}`,
    )
    console.log(`         ratio GET /user ÷ bare ${(r.user.rps / r.bare.rps).toFixed(2)}, ÷ nginx ${(r.user.rps / r.nginx.rps).toFixed(2)}`)
  }
  results.set(workers, rounds)
  for (const target of targets) await target.stop()
}

const medianOf = (rounds: Round[], pick: (r: Round) => number) => median(rounds.map(pick))
console.log('\nmedians over the rounds')
const first = counts[0]!
for (const [workers, rounds] of results) {
  const rps = (k: keyof Round) => medianOf(rounds, (r) => r[k].rps)
  const cpu = (k: keyof Round) => medianOf(rounds, (r) => r[k].cpuUs)
  const vsFirst =
    workers === first
      ? ''
      : ` | × ${first}: GET /user ${(rps('user') / medianOf(results.get(first)!, (r) => r.user.rps)).toFixed(2)}, bare ${(rps('bare') / medianOf(results.get(first)!, (r) => r.bare.rps)).toFixed(2)}, nginx ${(rps('nginx') / medianOf(results.get(first)!, (r) => r.nginx.rps)).toFixed(2)}`
  const ratio = medianOf(rounds, (r) => r.user.rps / r.bare.rps)
  console.log(
    `${workers} process(es): GET /user ${rps('user').toFixed(0)} req/s (${cpu('user').toFixed(0)} µs CPU/req), bare ${rps('bare').toFixed(0)} (${cpu('bare').toFixed(0)} µs), nginx ${rps('nginx').toFixed(0)} (${cpu('nginx').toFixed(0)} µs) | GET /user ÷ bare ${ratio.toFixed(2)} (goal ≥ 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'}), ÷ nginx ${medianOf(rounds, (r) => r.user.rps / r.nginx.rps).toFixed(2)}${vsFirst}`,
  )
}
rmSync(dir, { recursive: true, force: true })
process.exit(0)
