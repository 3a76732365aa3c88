// One-command benchmark: bare Bun.serve JSON vs token-authenticated GET /api/v1/user on the same
// machine in the same run, measured with wrk (Debian package `wrk`). Prints req/s, p50/p99 and the ratio.
// Usage: npm run bench [-- --duration 10 --connections 50 --rounds 3]

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createApp, openDeps } from '../src/app'
import { loadConfig } from '../src/config'
import { ensureFirstAdmin } from '../src/identity/service'
import { findUserByName } from '../src/identity/store'
import { mintToken } from '../src/identity/tokens/service'
import { jsonLogger } from '../src/logger'
import { type Figures, wrk as measure } from './wrk'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
})

if (Bun.spawnSync(['which', 'wrk']).exitCode !== 0) {
  console.error('wrk is not installed: apt-get install -y wrk')
  process.exit(2)
}

const bare = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ hello: 'world', id: 1 }) })

const dataDir = mkdtempSync(join(tmpdir(), 'platform-bench-'))
const config = loadConfig({
  PLATFORM_DATA_DIR: dataDir,
  PLATFORM_ADMIN_PASSWORD: 'bench-password-1',
  PLATFORM_REQUEST_LOG: 'false',
  PLATFORM_SANDBOX_CLUSTER: 'false',
})
const deps = await openDeps(config, jsonLogger())
await ensureFirstAdmin(deps.db, config.admin)
const admin = (await findUserByName(deps.db.read, 'admin'))!
const { plaintext } = await mintToken(deps.db, admin.id, { name: 'bench', scopes: ['all'] })
const app = createApp(deps).listen({ port: 0, hostname: '127.0.0.1', reusePort: false })

const rows: { round: number; bare: Figures; user: Figures }[] = []
const fmt = (f: Figures) => `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2)} ms  p99 ${f.p99.toFixed(2)} ms`
console.log(`wrk -t2 -c${values.connections} -d${values.duration}s, ${values.rounds} rounds, same machine, alternating targets`)
for (let round = 1; round <= Number(values.rounds); round++) {
  const bareFig = await measure(`http://127.0.0.1:${bare.port}/`, {}, values)
  const userFig = await measure(`http://127.0.0.1:${app.server!.port}/api/v1/user`, { Authorization: `token ${plaintext}` }, values)
  rows.push({ round, bare: bareFig, user: userFig })
  console.log(
    `round ${round}: Bun.serve JSON ${fmt(bareFig)} | GET /api/v1/user ${fmt(userFig)} | ratio ${(userFig.rps / bareFig.rps).toFixed(2)}`,
  )
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ratio = median(rows.map((r) => r.user.rps / r.bare.rps))
console.log(`median ratio authenticated GET /user ÷ bare Bun.serve: ${ratio.toFixed(2)} (goal ≥ 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'})`)

bare.stop(true)
await app.stop()
await deps.db.close()
rmSync(dataDir, { recursive: true, force: true })
