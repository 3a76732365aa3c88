// Large member answers against the platform's memory. A member (in this process, plain HTTP on
// loopback) serves a ConfigMap list of --size MiB, generated as it is read; the platform runs as its
// own process with that member imported, and its RSS is sampled from /proc while:
//   1. --concurrent clients fetch the list at once through the passthrough (/k8s/), at full speed;
//   2. as many clients fetch it but read only --slow-kib KiB a second, for --slow-seconds;
//   3. --whole-concurrent clients ask for a --whole-size MiB list through the spec route (/proxy/),
//      which must read its answer whole (it filters it), and one asks for the --size MiB one.
// Prints RSS (MB) before, at peak and after each phase, and the statuses of phase 3.
// Usage: npm run bench:members [-- --size 300 --concurrent 3 --root <another checkout, to compare>]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, platformCommand, platformEnv, rssMbOf, startPlatform } from './processes'

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    size: { type: 'string', default: '300' },
    concurrent: { type: 'string', default: '3' },
    'slow-kib': { type: 'string', default: '256' },
    'slow-seconds': { type: 'string', default: '10' },
    'whole-size': { type: 'string', default: '40' },
    'whole-concurrent': { type: 'string', default: '8' },
    root: { type: 'string', default: resolve(import.meta.dir, '..') },
  },
})
const MiB = 1024 * 1024
const step = (text: string) => process.stderr.write(`… ${text}\n`)

/** A ConfigMap list of about `mib` MiB: its exact length, and its bytes made as they are read. */
function configMapList(mib: number): { length: number; stream(): ReadableStream<Uint8Array> } {
  const item = (i: number) => `{"metadata":{"name":"cm-${String(i).padStart(8, '0')}"},"data":{"v":"${'x'.repeat(960)}"}}`
  const perPiece = 1024
  const pieceOf = (first: number) =>
    new TextEncoder().encode(Array.from({ length: perPiece }, (_, j) => `${first + j === 0 ? '' : ','}${item(first + j)}`).join(''))
  const pieces = Math.max(1, Math.round((mib * MiB) / pieceOf(1).length))
  const head = new TextEncoder().encode('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[')
  const tail = new TextEncoder().encode(']}')
  const length = head.length + pieceOf(0).length + (pieces - 1) * pieceOf(1).length + tail.length
  return {
    length,
    stream() {
      let next = -1
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (next === -1) controller.enqueue(head)
          else if (next < pieces) controller.enqueue(pieceOf(next * perPiece))
          else {
            controller.enqueue(tail)
            controller.close()
          }
          next++
        },
      })
    },
  }
}

const lists = new Map([
  ['big', configMapList(Number(values.size))],
  ['whole', configMapList(Number(values['whole-size']))],
])
const member = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 0,
  fetch(request) {
    const path = new URL(request.url).pathname
    if (path === '/version') return Response.json({ major: '1', minor: '30', gitVersion: 'v1.30.0' })
    if (path === '/api/v1/nodes') return Response.json({ kind: 'NodeList', items: [], metadata: {} })
    if (path === '/api/v1/namespaces/kube-system') return Response.json({ metadata: { name: 'kube-system', uid: 'bench-member' } })
    const list = lists.get(/^\/api\/v1\/namespaces\/(\w+)\/configmaps$/.exec(path)?.[1] ?? '')
    if (!list) return Response.json({ kind: 'Status', code: 404 }, { status: 404 })
    return new Response(list.stream(), { headers: { 'content-type': 'application/json', 'content-length': String(list.length) } })
  },
})

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-members-'))
const main = join(values.root, 'src/main.ts')
const env = platformEnv(dir)
step(`starting the platform of ${values.root}`)
const platform = await startPlatform(1, freePort(), env, main)
const run = platformCommand(env, main)
const token = await run('admin', 'create-token', '--username', 'admin')
const kubeconfig = {
  apiVersion: 'v1',
  kind: 'Config',
  'current-context': 'big',
  clusters: [{ name: 'big', cluster: { server: member.url.href.replace(/\/$/, '') } }],
  users: [{ name: 'big', user: { token: 'member-token' } }],
  contexts: [{ name: 'big', context: { cluster: 'big', user: 'big' } }],
}
writeFileSync(join(dir, 'member.kubeconfig'), JSON.stringify(kubeconfig))
await run('cluster', 'import', '--owner', 'admin', '--name', 'big', '--kubeconfig', join(dir, 'member.kubeconfig'))
const rss = () => rssMbOf(platform.pids())

const base = `http://127.0.0.1:${platform.port}/api/v1/clusters/admin/big`
const auth = { authorization: `token ${token}` }

/** Runs `work` while sampling the platform's RSS every 50 ms; prints before, peak and after. */
async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  Bun.gc(true)
  await Bun.sleep(500)
  const before = rss()
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss())
  }, 50)
  const started = performance.now()
  const result = await work()
  clearInterval(sampler)
  const seconds = (performance.now() - started) / 1000
  await Bun.sleep(500)
  console.log(
    `${name}\n  platform RSS ${before.toFixed(0)} MB → peak ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)}), ${rss().toFixed(0)} MB after; ${seconds.toFixed(1)} s`,
  )
  return result
}

/** Reads `res`'s body, at most `kibPerSecond` KiB a second (all at once when undefined) and for at most `seconds`; its byte count. */
async function drain(res: Response, kibPerSecond?: number, seconds = Number.POSITIVE_INFINITY): Promise<number> {
  const body = res.body!.getReader()
  const until = performance.now() + seconds * 1000
  let bytes = 0
  while (performance.now() < until) {
    const { done, value } = await body.read()
    if (done) return bytes
    bytes += value.length
    if (kibPerSecond) await Bun.sleep((value.length / 1024 / kibPerSecond) * 1000)
  }
  await body.cancel()
  return bytes
}

const concurrent = Number(values.concurrent)
const passthrough = `${base}/k8s/api/v1/namespaces/big/configmaps`
console.log(
  `${concurrent} × ${values.size} MiB answers (${(lists.get('big')!.length / MiB).toFixed(0)} MiB each) through the platform, 2-core machine, one run`,
)
const fast = await phase(`1. ${concurrent} clients through /k8s/ at full speed`, () =>
  Promise.all(Array.from({ length: concurrent }, async () => drain(await fetch(passthrough, { headers: auth })))),
)
console.log(`  received ${fast.map((b) => (b / MiB).toFixed(0)).join(', ')} MiB`)
const slow = await phase(`2. ${concurrent} clients through /k8s/ reading ${values['slow-kib']} KiB/s for ${values['slow-seconds']} s`, () =>
  Promise.all(
    Array.from({ length: concurrent }, async () =>
      drain(await fetch(passthrough, { headers: auth }), Number(values['slow-kib']), Number(values['slow-seconds'])),
    ),
  ),
)
console.log(`  received ${slow.map((b) => (b / MiB).toFixed(1)).join(', ')} MiB before leaving`)
const statuses = await phase(
  `3. ${values['whole-concurrent']} clients through /proxy/ (read whole) for ${values['whole-size']} MiB, and one for ${values.size} MiB`,
  () =>
    Promise.all([
      ...Array.from({ length: Number(values['whole-concurrent']) }, async () => {
        const res = await fetch(`${base}/proxy/core/v1/namespaces/whole/configmaps/`, { headers: auth })
        await drain(res)
        return res.status
      }),
      fetch(`${base}/proxy/core/v1/namespaces/big/configmaps/`, { headers: auth }).then(async (res) => {
        await drain(res)
        return `${res.status} (${values.size} MiB)`
      }),
    ]),
)
const counts = new Map<string, number>()
for (const status of statuses) counts.set(String(status), (counts.get(String(status)) ?? 0) + 1)
console.log(`  statuses: ${[...counts].map(([status, n]) => `${n} × ${status}`).join(', ')}`)

await platform.stop()
member.stop(true)
rmSync(dir, { recursive: true, force: true })
process.exit(0)
