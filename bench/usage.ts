// Usage ingestion and report benchmark (issue 18): ingest 10,000 objects × 730 hourly events
// (7.3 M events) through the ingestion service, then read the monthly summary; prints the time from
// the first event to a readable summary and the peak RSS. With Chromium present, also the PDF
// render times (cold: first render with a browser launch; warm: p50 of the following ones) and thirty downloads at
// once through the route (how fast the ones beyond the printer's line are refused, and the memory it all takes).
// First, the memory and answer of three bodies of a million bad events each, sent at once.
// Usage: npm run bench:usage [-- --objects 10000 --hours 730 --batch 50]

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { closeDeps, createApp, openDeps } from '../src/app'
import { loadConfig } from '../src/config'
import { ensureFirstAdmin } from '../src/identity/service'
import { findUserByName } from '../src/identity/store'
import { mintToken } from '../src/identity/tokens/service'
import { jsonLogger } from '../src/logger'
import { createOrg } from '../src/orgs/service'
import { ingestEvents } from '../src/usage/ingest'
import { monthlyReportPdf, monthlySummary } from '../src/usage/service'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    objects: { type: 'string', default: '10000' },
    hours: { type: 'string', default: '730' },
    batch: { type: 'string', default: '50' },
  },
})
const OBJECTS = Number(values.objects)
const HOURS = Number(values.hours)
const BATCH = Number(values.batch)

const dataDir = mkdtempSync(join(tmpdir(), 'platform-bench-usage-'))
const config = loadConfig({
  PLATFORM_DATA_DIR: dataDir,
  PLATFORM_ADMIN_PASSWORD: 'bench-password-1',
  PLATFORM_REQUEST_LOG: 'false',
  PLATFORM_SANDBOX_CLUSTER: 'false',
  PLATFORM_MODES: 'billing',
})
const deps = await openDeps(config, jsonLogger())
await ensureFirstAdmin(deps.db, config.admin)
const admin = (await findUserByName(deps.db.read, 'admin'))!
const org = await createOrg(deps, admin, { username: 'bench', visibility: 'public', origin: 'api' })

const mib = (bytes: number) => (bytes / 1048576).toFixed(0)

/**
 * The kernel's peak RSS of this process (VmHWM), reset to the current RSS first (Linux): exact even while
 * synchronous work keeps a sampling timer from running. Returns the RSS at the reset.
 */
function resetPeakRss(): number {
  writeFileSync('/proc/self/clear_refs', '5')
  return process.memoryUsage().rss
}
const peakRssSinceReset = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024

let peakRss = process.memoryUsage().rss
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
}, 50)

// A body of a million bad events (3 MB of `{}` lines) through the route, three at once: the answer and the
// memory it takes stay bounded by the body (docs/decisions.md §5a), whatever its event count.
const app = createApp(deps)
const { plaintext } = await mintToken(deps.db, admin.id, { name: 'bench', scopes: ['all'] })
{
  const body = '{}\n'.repeat(1_000_000)
  const post = () =>
    app.handle(
      new Request('http://localhost/api/v1/usage/events?org=bench', {
        method: 'POST',
        headers: { authorization: `token ${plaintext}`, 'content-type': 'application/x-ndjson' },
        body,
      }),
    )
  Bun.gc(true)
  const before = resetPeakRss()
  const started = performance.now()
  const answers = await Promise.all([post(), post(), post()])
  const seconds = (performance.now() - started) / 1000
  const sizes = await Promise.all(answers.map(async (res) => `${res.status} ${(await res.text()).length} B`))
  const peak = peakRssSinceReset()
  console.log(
    `bad body: 3 × 1,000,000 bad NDJSON lines (${(body.length / 1e6).toFixed(1)} MB each) at once in ${seconds.toFixed(1)} s: answers ${sizes.join(', ')}; ` +
      `RSS ${mib(before)} → peak ${mib(peak)} MiB (+${mib(peak - before)} MiB)`,
  )
}

// September 2025 and the start of October: 730 hours from Sep 1.
const START = Date.UTC(2025, 8, 1)
const CLUSTERS = [
  { uid: 'bench-prod', name: 'prod', mode: 'prod' },
  { uid: 'bench-dev', name: 'dev', mode: 'dev' },
  { uid: 'bench-qa', name: 'qa' },
]

/** The events of objects [from, to): each hourly, resized once half-way. */
function eventsOf(from: number, to: number): unknown[] {
  const events: unknown[] = []
  for (let o = from; o < to; o++) {
    const cluster = CLUSTERS[o % CLUSTERS.length]!
    const object = {
      group: 'kubedb.com',
      kind: o % 2 ? 'Postgres' : 'MongoDB',
      name: `db-${o}`,
      uid: `00000000-0000-4000-8000-${String(o).padStart(12, '0')}`,
    }
    const namespace = { uid: `ns-${o % 40}`, name: `team-${o % 40}` }
    for (let h = 0; h < HOURS; h++) {
      const cpu = h < HOURS / 2 ? '500m' : '1'
      events.push({
        time: new Date(START + h * 3_600_000).toISOString(),
        type: h === 0 ? 'created' : 'heartbeat',
        product: 'dbprod',
        cluster,
        namespace,
        object,
        resources: { requests: { cpu, memory: h < HOURS / 2 ? '1Gi' : '2Gi' } },
      })
    }
  }
  return events
}

// Making the events stands for the agents' side and is not timed; reading, counting and storing them is.
let ingestMs = 0
let accepted = 0
for (let o = 0; o < OBJECTS; o += BATCH) {
  const events = eventsOf(o, Math.min(OBJECTS, o + BATCH))
  const started = performance.now()
  const result = await ingestEvents(deps, org.id, events)
  ingestMs += performance.now() - started
  accepted += result.accepted
}
const readStarted = performance.now()
const summary = await monthlySummary(deps, org, 'dbprod', { period_start: '2025-09', period_end: '2025-10' })
const ingestSeconds = (ingestMs + performance.now() - readStarted) / 1000
clearInterval(sampler)
peakRss = Math.max(peakRss, process.memoryUsage().rss)

console.log(`usage ingest: ${OBJECTS} objects × ${HOURS} hourly events = ${accepted.toLocaleString('en')} events accepted`)
console.log(
  `  ingest-to-readable ${ingestSeconds.toFixed(2)} s (${Math.round(accepted / ingestSeconds).toLocaleString('en')} events/s), peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MiB`,
)
console.log(`  summary: ${JSON.stringify(summary.months)}`)

// PDF of September (10,000 objects): cold = browser launch + first render; warm = the next ones.
const timed = async () => {
  const t0 = performance.now()
  const { pdf } = await monthlyReportPdf(deps, org, { year: '2025', month: '09' })
  return { ms: performance.now() - t0, bytes: pdf.length }
}
try {
  const cold = await timed()
  const warm: number[] = []
  for (let i = 0; i < 20; i++) warm.push((await timed()).ms)
  warm.sort((a, b) => a - b)
  console.log(
    `pdf (September, ${OBJECTS} objects): cold ${cold.ms.toFixed(0)} ms (${(cold.bytes / 1024).toFixed(0)} KiB), warm p50 ${warm[10]!.toFixed(0)} ms, p90 ${warm[18]!.toFixed(0)} ms`,
  )
} catch (error) {
  console.log(`pdf: skipped (${error instanceof Error ? error.message : String(error)})`)
}

// Thirty downloads of September at once through the route: the printer's line (PLATFORM_PDF_CONCURRENCY 2 +
// PLATFORM_PDF_QUEUE 8 by default) takes ten, and the others are refused before anything of the month is read.
{
  const download = async () => {
    const t0 = performance.now()
    const res = await app.handle(
      new Request('http://localhost/api/v1/dashboard/summary/2025/09/download?org=bench', {
        headers: { authorization: `token ${plaintext}` },
      }),
    )
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - t0 }
  }
  Bun.gc(true)
  const before = resetPeakRss()
  const answers = await Promise.all(Array.from({ length: 30 }, download))
  const peak = peakRssSinceReset()
  const times = (status: number) =>
    answers
      .filter((a) => a.status === status)
      .map((a) => a.ms)
      .sort((a, b) => a - b)
  const [printed, refused] = [times(200), times(503)]
  const others = answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => a.status)
  console.log(
    `pdf crowd: 30 downloads at once: ${printed.length} × 200 (last after ${(printed.at(-1) ?? 0).toFixed(0)} ms), ` +
      `${refused.length} × 503 (p50 ${(refused[Math.floor(refused.length / 2)] ?? 0).toFixed(0)} ms, max ${(refused.at(-1) ?? 0).toFixed(0)} ms)` +
      `${others.length > 0 ? `, others ${others.join(' ')}` : ''}; RSS ${mib(before)} → peak ${mib(peak)} MiB (+${mib(peak - before)} MiB)`,
  )
}
await closeDeps(deps)
rmSync(dataDir, { recursive: true, force: true })
