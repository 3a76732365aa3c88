// Rendering an order of a 10-template chart against bare `helm template` of the same chart, same
// binary, same values: cold (a fresh platform fetching the chart from a loopback repository, then
// rendering), uncached (chart on disk, values never rendered before: one Helm run plus our work)
// and warm (the render cache answers). Goals (issue 17): warm ≤ 0.2 × bare, uncached ≤ 1.2 × bare.
// Then memory (issue 24): six orders of different charts of ~95 MB expanded each, rendered by one
// platform: RSS after a full collection before and after, and what the orders caches hold.
// Usage: npm run bench:orders [-- --runs 20]
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createApp, openDeps } from '../src/app'
import { loadConfig } from '../src/config'
import { insertUser } from '../src/identity/store'
import { mintToken } from '../src/identity/tokens/service'
import { memoryLogger } from '../src/logger'
import { packChartArchive } from '../src/orders/charts/pack'
import { ordersRuntime } from '../src/orders/runtime'

const { values: args } = parseArgs({ args: process.argv.slice(2), options: { runs: { type: 'string', default: '30' } } })
const runs = Math.max(3, Number(args.runs))
const root = resolve(import.meta.dir, '..')
const HELM = join(root, '.tools/bin/helm')
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-orders-'))
const step = (text: string) => process.stderr.write(`… ${text}\n`)

function helm(argv: string[], cwd = dir): string {
  const run = Bun.spawnSync([HELM, ...argv], { cwd, env: { PATH: '/usr/bin:/bin', HOME: dir, KUBECONFIG: '/dev/null' } })
  if (run.exitCode !== 0) throw new Error(`helm ${argv.join(' ')}: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

// The chart: `helm create` (deployment, service, serviceaccount, hpa, ingress, test hook) plus
// four ConfigMaps: ten rendered templates (NOTES.txt and _helpers.tpl besides).
step('building the chart with helm create')
helm(['create', 'bench'])
for (let i = 0; i < 4; i++) {
  writeFileSync(
    join(dir, 'bench/templates', `config-${i}.yaml`),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "bench.fullname" . }}-${i}\n  labels:\n    {{- include "bench.labels" . | nindent 4 }}\ndata:\n  replicas: {{ .Values.replicaCount | quote }}\n`,
  )
}
helm(['package', join(dir, 'bench'), '--destination', join(dir, 'repo')])
const archives = new Map<string, Uint8Array>([['bench', new Uint8Array(readFileSync(join(dir, 'repo', 'bench-0.1.0.tgz')))]])

// The memory charts: 19 files of 5 MB (the per-file cap is 5 MiB, the expanded cap 100 MiB), a byte repeated: ~100 KB packed.
const BIG_CHARTS = 6
const text = (s: string) => new TextEncoder().encode(s)
for (let i = 0; i < BIG_CHARTS; i++) {
  const files = new Map([
    ['Chart.yaml', text(`apiVersion: v2\nname: big-${i}\nversion: 0.1.0\n`)],
    ['templates/cm.yaml', text('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n')],
  ])
  for (let f = 0; f < 19; f++) files.set(`files/blob-${f}.txt`, new Uint8Array(5_000_000).fill(97 + i))
  archives.set(`big-${i}`, packChartArchive({ root: `big-${i}`, files, subcharts: new Map(), bytes: 0 }))
}
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const index = `apiVersion: v1\nentries:\n${[...archives]
  .map(
    ([name, bytes]) => `  ${name}:\n  - name: ${name}\n    version: 0.1.0\n    digest: ${sha256(bytes)}\n    urls: [${name}-0.1.0.tgz]\n`,
  )
  .join('')}`
const repo = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const path = new URL(request.url).pathname
    if (path === '/charts/index.yaml') return new Response(index, { headers: { etag: `"${sha256(text(index))}"` } })
    const archive = archives.get(path.replace(/^\/charts\/(.+)-0\.1\.0\.tgz$/, '$1'))
    return archive ? new Response(archive as BodyInit) : new Response('not found', { status: 404 })
  },
})
const repoUrl = `http://127.0.0.1:${repo.port}/charts`

async function platform() {
  const dataDir = join(dir, `data-${Math.random().toString(36).slice(2)}`)
  mkdirSync(dataDir)
  const config = loadConfig({
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_SANDBOX_CLUSTER: 'false',
    PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true',
    PLATFORM_REQUEST_LOG: 'false',
    PLATFORM_CHART_SOURCES: JSON.stringify([{ name: 'local', url: repoUrl }]),
  })
  const deps = await openDeps(config, memoryLogger())
  const app = createApp(deps)
  const user = await deps.db.write((tx) =>
    insertUser(tx, { name: 'bench', lowerName: 'bench', email: 'bench@example.com', passwordHash: 'x', isAdmin: false }),
  )
  const { plaintext } = await mintToken(deps.db, user.id, { name: 'bench', scopes: ['all'] })
  const call = (method: string, path: string, body?: unknown) =>
    app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `token ${plaintext}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
  const order = async (replicaCount: number, name = 'bench'): Promise<string> => {
    const res = await call('POST', '/api/v1/user/deploy/orders', {
      spec: {
        packages: [
          {
            chart: {
              name,
              version: '0.1.0',
              releaseName: 'bench',
              namespace: 'apps',
              sourceRef: { name: 'local' },
              values: { replicaCount },
            },
          },
        ],
      },
    })
    if (res.status !== 200) throw new Error(`order: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { metadata: { uid: string } }).metadata.uid
  }
  const render = async (uid: string) => {
    const res = await call('GET', `/api/v1/user/deploy/orders/${uid}/render/manifest`)
    if (res.status !== 200) throw new Error(`render: ${res.status} ${await res.text()}`)
    return res.text()
  }
  return { order, render, deps, close: () => deps.db.close() }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

writeFileSync(join(dir, 'values.json'), JSON.stringify({ replicaCount: 3 }))
const bareArgs = [
  'template',
  'bench',
  join(dir, 'bench'),
  '--namespace',
  'apps',
  '--kube-version',
  '1.22.0',
  '--values',
  join(dir, 'values.json'),
]
const bare: number[] = []

step(`cold: a fresh platform orders (fetches) and renders, ${Math.min(runs, 5)} runs`)
const cold: number[] = []
helm(bareArgs) // one bare run first, so Helm's binary is in the page cache for everyone
for (let i = 0; i < Math.min(runs, 5); i++) {
  const p = await platform()
  cold.push(await time(async () => p.render(await p.order(3))))
  await p.close()
}

step(`bare helm template and uncached renders, interleaved (the machine is shared: both see the same load), ${runs} runs each`)
const p = await platform()
const uids: string[] = []
for (let i = 0; i < runs; i++) uids.push(await p.order(100 + i))
const uncached: number[] = []
for (const uid of uids) {
  bare.push(await time(() => helm(bareArgs)))
  uncached.push(await time(() => p.render(uid)))
}
step(`warm renders, ${runs} runs`)
const warm: number[] = []
for (let i = 0; i < runs; i++) warm.push(await time(() => p.render(uids[0]!)))
await p.close()

step(`memory: ${BIG_CHARTS} orders of different charts of ~95 MB expanded each, ordered and rendered`)
const MiB = 1024 * 1024
const rss = () => {
  Bun.gc(true)
  return process.memoryUsage().rss / MiB
}
const m = await platform()
await m.render(await m.order(1))
const rssBefore = rss()
for (let i = 0; i < BIG_CHARTS; i++) await m.render(await m.order(1, `big-${i}`))
const rssAfter = rss()
const caches = ordersRuntime(m.deps)
const held = [caches.charts.parsed, caches.renders.done, caches.values.parsed].map((c) => `${(c.bytes / MiB).toFixed(1)} MiB in ${c.size}`)
await m.close()
repo.stop(true)
rmSync(dir, { recursive: true, force: true })

const b = median(bare)
const row = (name: string, xs: number[]) =>
  `${name.padEnd(34)} ${median(xs).toFixed(1).padStart(8)} ms   ${(median(xs) / b).toFixed(2)} × bare`
console.log(`Order render of a 10-template chart, median of ${runs} (cold: ${cold.length}) on this machine`)
console.log(row('bare helm template', bare))
console.log(row('ours, cold (fetch + render)', cold))
console.log(`${row('ours, uncached (one Helm run)', uncached)}   goal ≤ 1.2 ×`)
console.log(`${row('ours, warm (render cache)', warm)}   goal ≤ 0.2 ×`)
console.log(
  `Memory: RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MiB (+${(rssAfter - rssBefore).toFixed(0)}) after ${BIG_CHARTS} charts of ~95 MB expanded; caches hold charts ${held[0]}, renders ${held[1]}, values ${held[2]}`,
)
