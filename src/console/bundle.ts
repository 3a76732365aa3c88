import { existsSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { assetPath } from '../assets'

/** One file of the console's bundle: its content-hashed name, content and media type. */
interface ConsoleFile {
  name: string
  content: Blob
  type: string
}

/** The bundle: every file by name, and the script and style sheet each page loads. */
export interface ConsoleBundle {
  files: ReadonlyMap<string, ConsoleFile>
  script: string
  style: string
}

/** Where the built binary carries the bundle (scripts/build.ts embeds the folder under this name). */
export const EMBEDDED_CONSOLE = 'console'
const ENTRY = join(import.meta.dir, 'web', 'main.tsx')

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
}
const typeOf = (name: string) => TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream'

function bundleOf(files: ConsoleFile[]): ConsoleBundle {
  const script = files.find((f) => f.name.startsWith('main-') && f.name.endsWith('.js'))
  const style = files.find((f) => f.name.endsWith('.css'))
  if (!script || !style) throw new Error(`the console bundle lacks its ${script ? 'style sheet' : 'script'}`)
  return { files: new Map(files.map((f) => [f.name, f])), script: script.name, style: style.name }
}

/**
 * Bundles the console's source (src/console/web) with Bun's bundler: minified, split, every file named
 * for its content so that it can be cached for good. Throws with the bundler's messages when it fails.
 */
export async function buildConsole(): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    minify: true,
    splitting: true,
    sourcemap: 'linked',
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
  })
  if (!result.success) throw new Error(`the console does not build: ${result.logs.map(String).join('; ')}`)
  return bundleOf(
    result.outputs.map((output) => {
      const name = basename(output.path)
      return { name, content: output, type: typeOf(name) }
    }),
  )
}

/** The list of the folder's files that scripts/build.ts writes beside them. */
export const MANIFEST = 'manifest.json'

/** The bundle the built binary carries, or undefined when run from source (then `buildConsole` makes it). */
export function embeddedConsole(): ConsoleBundle | undefined {
  const manifest = assetPath(join(EMBEDDED_CONSOLE, MANIFEST))
  if (!Bun.isStandaloneExecutable || !existsSync(manifest)) return undefined
  const names = JSON.parse(readFileSync(manifest, 'utf8')) as string[]
  return bundleOf(names.map((name) => ({ name, content: Bun.file(assetPath(join(EMBEDDED_CONSOLE, name))), type: typeOf(name) })))
}
