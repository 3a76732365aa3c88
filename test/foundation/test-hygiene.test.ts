import { expect, test } from 'bun:test'
import { readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from '../support/app'
import { processesMarked } from '../support/children'

const SUPPORT = resolve(import.meta.dir, '../support')
const MARK = 'PLATFORM_TEST_HYGIENE_MARK'

/**
 * A test file starting real nats-servers through the support module, one for the file and one in
 * its test (each when asked), the test then passing, failing or timing out.
 */
const natsFile = (servers: { inFile: boolean; inTest: boolean }, ending = '', timeoutMs = 30_000) => `
import { test } from 'bun:test'
import { tempDir } from '${SUPPORT}/app'
import { natsServer } from '${SUPPORT}/nats'
import { freePort } from '${SUPPORT}/ports'

const started = () => natsServer(tempDir(), tempDir('nats-'), { port: freePort() }).start()
${servers.inFile ? 'await started()' : ''}

test('with nats-servers', async () => {
  ${servers.inTest ? 'await started()' : ''}
  ${ending}
}, ${timeoutMs})
`

/** Runs `bun test` over `files` in a directory of their own, as `npm test` does; marks every process it starts. */
async function runSuite(files: Record<string, string>): Promise<{ mark: string; output: string }> {
  const dir = tempDir('hygiene-')
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const mark = crypto.randomUUID()
  const run = Bun.spawn([process.execPath, 'test', '--timeout', '30000', '--preload', join(SUPPORT, 'preload.ts')], {
    cwd: dir,
    env: { ...process.env, [MARK]: mark },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  return { mark, output: stdout + stderr }
}

test('servers started by several test files, in tests that pass, fail and time out → none is left running after the run', async () => {
  const { mark, output } = await runSuite({
    'a.test.ts': natsFile({ inFile: true, inTest: false }),
    'b.test.ts': natsFile({ inFile: true, inTest: true }, `throw new Error('this test fails')`),
    'c.test.ts': natsFile({ inFile: false, inTest: true }, 'await new Promise(() => {})', 20_000),
    'd.test.ts': natsFile({ inFile: true, inTest: false }),
  })
  expect(output).toContain('this test fails')
  expect(output).toContain('timed out')
  // Each server stopped with its test or file: nothing was left for the end-of-run sweep either.
  expect(output).not.toContain('still running at the end')
  expect(processesMarked(MARK, mark)).toEqual([])
}, 240_000)

test('a process a test starts and forgets → named and killed when the run ends', async () => {
  const { mark, output } = await runSuite({
    'forgets.test.ts': `
import { test } from 'bun:test'
test('starts a sleeper and forgets it', () => { Bun.spawn(['sleep', '600']) })
`,
  })
  expect(output).toMatch(/test run: 1 process\(es\) still running at the end, killed:\n\s+\d+ sleep 600/)
  expect(processesMarked(MARK, mark)).toEqual([])
}, 60_000)

test('every test file of the suite asserts something (no debugging print runs as a test)', async () => {
  const root = resolve(import.meta.dir, '..')
  const silent: string[] = []
  for await (const file of new Bun.Glob('**/*.test.ts').scan(root)) {
    const source = await Bun.file(join(root, file)).text()
    if (!/\bexpect\(|\.toThrow|assert/.test(source)) silent.push(file)
  }
  expect(silent).toEqual([])
})

/** Test folders that never reach the database driver, run once (docs/development.md). */
const DRIVER_FREE = ['agent', 'console', 'kube', 'kube-emulator', 'net', 'support']

test('every test folder that may reach the database is in the libSQL pass of npm test', async () => {
  const scripts = ((await Bun.file(resolve(import.meta.dir, '../../package.json')).json()) as { scripts: Record<string, string> }).scripts
  const inPass = new Set([...scripts['test:libsql']!.matchAll(/\btest\/([\w-]+)/g)].map((m) => m[1]!))
  const folders = readdirSync(resolve(import.meta.dir, '..'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
  expect(folders.filter((folder) => !inPass.has(folder) && !DRIVER_FREE.includes(folder))).toEqual([])
})
