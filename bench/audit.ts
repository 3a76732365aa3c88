// What the audit trail costs the cluster proxy (docs/api/audit.md): a proxied write (a merge PATCH
// of one ConfigMap, recorded as a `kubernetes` event) and a proxied read (GET of it, never
// recorded) through this checkout and through the platform as it was before the audit trail
// (`--before`, a revision checked out for the run beside this one), each its own process and
// database, measured with wrk one after the other, alternating, `--rounds` times; the medians.
// Usage: npm run bench:audit [-- --duration 5 --connections 10 --rounds 3 --before df1e1e6^]

import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startEmulator } from '../src/kube-emulator'
import { freePort, type Measured, measureCpu, median, platformCommand, platformEnv, ROOT, requireTools, startPlatform } from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    // The commit before the audit trail landed (df1e1e6 "Audit events").
    before: { type: 'string', default: 'df1e1e6^' },
  },
})
requireTools('wrk', 'git')

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-audit-'))
const step = (text: string) => process.stderr.write(`… ${text}\n`)
const git = (...args: string[]) => {
  const run = Bun.spawnSync(['git', '-C', ROOT, ...args], { stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr.toString()}`)
}
step(`checking out ${values.before} beside this checkout`)
const beforeRoot = join(dir, 'before')
git('worktree', 'add', '--detach', beforeRoot, values.before)
symlinkSync(join(ROOT, 'node_modules'), join(beforeRoot, 'node_modules'))

const member = await startEmulator({ tls: true, seed: true })
writeFileSync(join(dir, 'member.kubeconfig'), member.kubeconfig())
await fetch(`${member.url}/api/v1/namespaces/demo/configmaps`, {
  method: 'POST',
  headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ metadata: { name: 'bench-write' }, data: { n: '0' } }),
  tls: { ca: member.caCertPem },
} as RequestInit)
const patchScript = join(dir, 'patch.lua')
writeFileSync(
  patchScript,
  `wrk.method = "PATCH"\nwrk.body = '{"data":{"n":"1"}}'\nwrk.headers["Content-Type"] = "application/merge-patch+json"\n`,
)

/** One platform, this checkout's or the earlier one's, with its own database, an admin token and the member imported. */
async function platform(name: string, main: string) {
  const env = platformEnv(join(dir, name))
  const run = platformCommand(env, main)
  const target = await startPlatform(1, freePort(), env, main)
  const token = await run('admin', 'create-token', '--username', 'admin')
  await run('cluster', 'import', '--owner', 'admin', '--name', 'dev', '--kubeconfig', join(dir, 'member.kubeconfig'))
  const url = `http://127.0.0.1:${target.port}/api/v1/clusters/admin/dev/k8s/api/v1/namespaces/demo/configmaps/bench-write`
  return { target, headers: { authorization: `token ${token}` }, url }
}

const load = { connections: values.connections, duration: values.duration }
const recording = await platform('now', join(ROOT, 'src/main.ts'))
const earlier = await platform('before', join(beforeRoot, 'src/main.ts'))
const figures: Record<string, Measured[]> = {}
const measure = async (key: string, p: typeof recording, script?: string) => {
  ;(figures[key] ??= []).push(await measureCpu(p.url, p.headers, { ...load, script }, p.target))
}
for (let round = 1; round <= Number(values.rounds); round++) {
  step(`round ${round} of ${values.rounds}`)
  await measure('write, recorded', recording, patchScript)
  await measure('write, before', earlier, patchScript)
  await measure('read, now', recording)
  await measure('read, before', earlier)
}
const summary = (key: string) => {
  const runs = figures[key]!
  return {
    rps: median(runs.map((f) => f.rps)),
    p50: median(runs.map((f) => f.p50)),
    p99: median(runs.map((f) => f.p99)),
    cpuUs: median(runs.map((f) => f.cpuUs)),
  }
}
console.log(
  `wrk -t2 -c${values.connections} -d${values.duration}s, ${values.rounds} alternating rounds, medians; ${navigator.hardwareConcurrency} cores shared by wrk, the platform and the member`,
)
for (const kind of ['write', 'read'] as const) {
  const now = summary(kind === 'write' ? 'write, recorded' : 'read, now')
  const then = summary(`${kind}, before`)
  const line = (label: string, f: ReturnType<typeof summary>) =>
    `  ${label.padEnd(34)} ${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(6)} ms  platform CPU/request ${f.cpuUs.toFixed(0)} µs`
  console.log(`\n${kind === 'write' ? 'PATCH one ConfigMap (a proxied write)' : 'GET one ConfigMap (a proxied read)'}`)
  console.log(line(kind === 'write' ? 'recorded (this checkout)' : 'this checkout', now))
  console.log(line(`before the audit trail (${values.before})`, then))
  console.log(
    `  this / before: ${(now.rps / then.rps).toFixed(3)}x req/s, p50 ${(now.p50 / then.p50).toFixed(3)}x, CPU/request ${(now.cpuUs / then.cpuUs).toFixed(3)}x`,
  )
}

await recording.target.stop()
await earlier.target.stop()
await member.stop()
git('worktree', 'remove', '--force', beforeRoot)
rmSync(dir, { recursive: true, force: true })
process.exit(0)
