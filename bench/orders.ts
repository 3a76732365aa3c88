// Rendering an order of a 10-template chart against bare `helm template` of the same chart, same
// binary, same values: cold (a fresh platform fetching the chart from a loopback repository, then
// rendering), uncached (chart on disk, values never rendered before: one Helm run plus our work)
// and warm (the render cache answers). Goals (issue 17): warm ≤ 0.2 × bare, uncached ≤ 1.2 × bare.
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
const tgz = readFileSync(join(dir, 'repo', 'bench-0.1.0.tgz'))
const digest = createHash('sha256').update(tgz).digest('hex')
const repo = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const path = new URL(request.url).pathname
    if (path === '/charts/index.yaml')
      return new Response(
        `apiVersion: v1\nentries:\n  bench:\n  - name: bench\n    version: 0.1.0\n    digest: ${digest}\n    urls: [bench-0.1.0.tgz]\n`,
        { headers: { etag: `"${digest}"` } },
      )
    if (path === '/charts/bench-0.1.0.tgz') return new Response(tgz)
    return new Response('not found', { status: 404 })
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
  const order = async (replicaCount: number): Promise<string> => {
    const res = await call('POST', '/api/v1/user/deploy/orders', {
      spec: {
        packages: [
          {
            chart: {
              name: 'bench',
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
  return { order, render, close: () => deps.db.close() }
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
