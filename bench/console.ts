// bun bench/console.ts: the web console's weight and first paint (docs/benchmarks.md, "The web console"). Bundles
// the console as the server does, then serves an app on a loopback port and loads /login (signed out) and /
// (signed in) in Debian's Chromium, five times each with a cold cache, reporting first contentful paint.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import puppeteer from 'puppeteer-core'
import { closeDeps, createApp, openDeps } from '../src/app'
import { loadConfig } from '../src/config'
import { buildConsole } from '../src/console/bundle'
import { hashPassword } from '../src/identity/passwords'
import { insertUser } from '../src/identity/store'
import { memoryLogger } from '../src/logger'
import { CHROMIUM_FLAGS } from '../src/usage/pdf/printer'

const started = performance.now()
const bundle = await buildConsole()
const built = performance.now() - started
const script = await bundle.files.get(bundle.script)!.content.arrayBuffer()
const style = await bundle.files.get(bundle.style)!.content.arrayBuffer()
const gz = (bytes: ArrayBuffer) => gzipSync(new Uint8Array(bytes), { level: 9 }).byteLength
console.log(
  `bundle: ${built.toFixed(0)} ms; script ${script.byteLength} B (${gz(script)} B gzip), style ${style.byteLength} B (${gz(style)} B gzip)`,
)

const dataDir = mkdtempSync(join(tmpdir(), 'platform-bench-console-'))
const deps = await openDeps(
  loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_PUBLIC_URL: 'http://localhost:0' }),
  memoryLogger(),
)
const password = 'bench console password'
const passwordHash = await hashPassword(password)
await deps.db.write((tx) => insertUser(tx, { name: 'bench', lowerName: 'bench', email: 'bench@example.com', passwordHash, isAdmin: false }))
const server = createApp(deps).listen({ port: 0, hostname: '127.0.0.1', reusePort: false })
const origin = `http://localhost:${server.server!.port}`
const browser = await puppeteer.launch({ executablePath: deps.config.chromiumPath, headless: true, pipe: true, args: CHROMIUM_FLAGS })

/** First contentful paint of `path` with an empty cache, in ms; `cookie` signs the page in. */
async function firstPaint(path: string, cookie?: string): Promise<number> {
  const context = await browser.createBrowserContext()
  const page = await context.newPage()
  if (cookie)
    await page.setCookie(
      ...cookie.split('; ').map((pair) => ({ name: pair.split('=')[0]!, value: pair.slice(pair.indexOf('=') + 1), url: origin })),
    )
  await page.goto(`${origin}${path}`, { waitUntil: 'networkidle0' })
  const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN)
  await context.close()
  return paint
}

const signIn = await fetch(`${origin}/api/v1/user/signin`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: 'bench', password }),
})
const cookie = signIn.headers
  .getSetCookie()
  .map((c) => c.split(';')[0])
  .join('; ')
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
for (const [path, withCookie] of [
  ['/login', undefined],
  ['/', cookie],
] as const) {
  const runs: number[] = []
  for (let i = 0; i < 5; i++) runs.push(await firstPaint(path, withCookie))
  console.log(`${path}: first contentful paint median ${median(runs).toFixed(0)} ms (${runs.map((r) => r.toFixed(0)).join(', ')})`)
}
await browser.close()
await server.stop()
await closeDeps(deps)
rmSync(dataDir, { recursive: true, force: true })
