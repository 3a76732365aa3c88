import { describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from '../support/app'

const ROOT = resolve(import.meta.dir, '../..')
const CONFIG = join(ROOT, '.dependency-cruiser.cjs')
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise')

/** Runs the layering check of `npm test` over a small src/ tree of `files` (path → source). */
function cruise(files: Record<string, string>) {
  const dir = tempDir()
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'bundler' } }))
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), source)
  }
  const out = Bun.spawnSync([DEPCRUISE, 'src', '--config', CONFIG], { cwd: dir })
  return { code: out.exitCode, output: out.stdout.toString() + out.stderr.toString() }
}

describe('layering check (dependency-cruiser, run by npm test)', () => {
  test('areas importing base layers one way → passes', () => {
    const out = cruise({
      'src/errors.ts': 'export class AppError extends Error {}\n',
      'src/http/guard.ts': "import { AppError } from '../errors'\nexport const guard = () => AppError\n",
      'src/identity/routes.ts': "import { guard } from '../http/guard'\nexport const routes = guard\n",
    })
    expect(out.output).toContain('no dependency violations found')
    expect(out.code).toBe(0)
  }, 60_000)

  test('two areas importing each other (a new cycle) → fails naming no-folder-cycles', () => {
    const out = cruise({
      'src/orgs/service.ts': "import type { Cluster } from '../clusters/store'\nexport type Org = { clusters: Cluster[] }\n",
      'src/clusters/store.ts': "import type { Org } from '../orgs/service'\nexport type Cluster = { org: Org }\n",
    })
    expect(out.output).toContain('no-folder-cycles')
    expect(out.code).not.toBe(0)
  }, 60_000)

  test('a base layer importing an area → fails naming base-imports-no-area', () => {
    const out = cruise({
      'src/identity/store.ts': 'export const findUser = () => undefined\n',
      'src/authz/authorize.ts': "import { findUser } from '../identity/store'\nexport const authorize = findUser\n",
    })
    expect(out.output).toContain('base-imports-no-area')
    expect(out.code).not.toBe(0)
  }, 60_000)

  test.each(['audit', 'singletons'])(
    'a base layer importing %s → fails naming base-imports-no-area',
    (area) => {
      const out = cruise({
        [`src/${area}/service.ts`]: 'export const record = () => undefined\n',
        'src/http/guard.ts': `import { record } from '../${area}/service'\nexport const guard = record\n`,
      })
      expect(out.output).toContain('base-imports-no-area')
      expect(out.code).not.toBe(0)
    },
    60_000,
  )

  test('the areas the check names are folders of src/', () => {
    const named = /const AREAS = '\(([^)]*)\)'/.exec(readFileSync(CONFIG, 'utf8'))![1]!.split('|')
    const folders = new Set(
      readdirSync(join(ROOT, 'src'), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    )
    expect(named.filter((area) => !folders.has(area))).toEqual([])
  })
})
