import { describe, expect, test } from 'bun:test'
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { MAIN } from '../support/process'
import { type CliRun, cli } from './support'

/** `nobody`: the commands run as a user that owns neither the data dir nor its files (the tests run as root). */
const NOBODY = 65534
const asNobody = (args: string[], env: Record<string, string>): CliRun => {
  const out = Bun.spawnSync(['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, MAIN, ...args], {
    env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'false', HOME: '/tmp', ...env },
    stdin: 'ignore',
  })
  return { code: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() }
}

/** A directory `nobody` may enter (tempDir makes 0700 ones owned by root). */
function sharedTemp(): string {
  const dir = tempDir()
  chmodSync(dir, 0o755)
  return dir
}

/** A directory every user may write into. */
function writableByAll(): string {
  const dir = tempDir()
  chmodSync(dir, 0o777)
  return dir
}

/** The commands that open the database, each with what it needs besides the data dir. */
const COMMANDS: [string, (dataDir: string) => string[]][] = [
  ['serve', () => ['serve', '--port', '0', '--host', '127.0.0.1']],
  ['migrate', () => ['migrate']],
  ['admin create-user', () => ['admin', 'create-user', '--username', 'dana', '--email', 'dana@example.com']],
  ['admin create-token', () => ['admin', 'create-token', '--username', 'erin']],
  ['backup', () => ['backup', join(writableByAll(), 'backup')]],
]

/** A data dir with a migrated database holding the first admin. */
function populatedDataDir(env: Record<string, string> = {}): string {
  const dataDir = join(sharedTemp(), 'data')
  const made = cli(['admin', 'create-user', '--username', 'erin', '--email', 'erin@example.com'], { PLATFORM_DATA_DIR: dataDir, ...env })
  if (made.code !== 0) throw new Error(made.stderr)
  return dataDir
}

/** One line on stderr, no stack trace. */
function expectOneLine(out: CliRun): string {
  const lines = out.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(out.stderr).not.toContain('    at ')
  return lines[0]!
}

const DAMAGES: [string, (file: string) => void][] = [
  ['random bytes', (file) => writeFileSync(file, crypto.getRandomValues(new Uint8Array(65_536)))],
  ['truncated', (file) => truncateSync(file, Math.floor(statSync(file).size / 3))],
  [
    'zeroed pages after the first',
    (file) => {
      const bytes = readFileSync(file)
      bytes.fill(0, 4096)
      writeFileSync(file, bytes)
    },
  ],
]

describe('a damaged database', () => {
  // Recognised with bun:sqlite, the driver of a local file; libSQL on a local file is a test mode that does not
  // recognise every damage (docs/operations.md), so this runs with bun:sqlite in both passes.
  const LOCAL_DRIVER = { PLATFORM_DATABASE_DRIVER: 'bun:sqlite' }
  for (const [damage, spoil] of DAMAGES) {
    test.each(COMMANDS)(`%s on a database with ${damage} → one line naming the file and restore, exit 2, file unchanged`, (_, args) => {
      const dataDir = populatedDataDir(LOCAL_DRIVER)
      const file = join(dataDir, 'platform.db')
      spoil(file)
      const before = readFileSync(file)
      const out = cli(args(dataDir), { PLATFORM_DATA_DIR: dataDir, ...LOCAL_DRIVER })
      expect(out.code).toBe(2)
      const line = expectOneLine(out)
      expect(line).toContain(`the database file ${file} is damaged`)
      expect(line).toContain('restore a backup')
      expect(line).toContain(join(dataDir, 'backups'))
      expect(readFileSync(file).equals(before)).toBe(true)
    })
  }
})

describe('a data dir this user may not use', () => {
  test.each(COMMANDS)('%s on a data dir owned by another user → one line naming the file, exit 2, nothing made', (_, args) => {
    const dataDir = populatedDataDir()
    chmodSync(dataDir, 0o700)
    const before = readdirSync(dataDir).sort()
    const out = asNobody(args(dataDir), { PLATFORM_DATA_DIR: dataDir })
    expect(out.code).toBe(2)
    const line = expectOneLine(out)
    expect(line).toContain(join(dataDir, 'platform.db'))
    expect(line).toMatch(/cannot be (opened|read)/)
    expect(readdirSync(dataDir).sort()).toEqual(before)
  })

  test.each(COMMANDS.filter(([name]) => name !== 'backup'))(
    '%s on a database file owned by root in the user’s data dir → one line naming the file, exit 2',
    (_, args) => {
      const dataDir = populatedDataDir()
      chownSync(dataDir, NOBODY, NOBODY)
      chmodSync(join(dataDir, 'platform.db'), 0o644)
      const out = asNobody(args(dataDir), { PLATFORM_DATA_DIR: dataDir })
      expect(out.code).toBe(2)
      const line = expectOneLine(out)
      expect(line).toContain(`the database file ${join(dataDir, 'platform.db')} cannot be opened or changed by this user (EPERM)`)
      expect(statSync(join(dataDir, 'platform.db')).mode & 0o777).toBe(0o644)
    },
  )

  test('backup into a directory this user cannot write → one line naming it, exit 2, the directory left empty', () => {
    const dataDir = populatedDataDir()
    expect(Bun.spawnSync(['chown', '-R', `${NOBODY}:${NOBODY}`, dataDir]).exitCode).toBe(0)
    const target = join(sharedTemp(), 'rootonly')
    mkdirSync(target, { mode: 0o755 })
    const out = asNobody(['backup', target], { PLATFORM_DATA_DIR: dataDir })
    expect(out.code).toBe(2)
    const line = expectOneLine(out)
    expect(line).toContain(`${target}/platform.db cannot be read or written by this user (EACCES)`)
    expect(readdirSync(target)).toEqual([])
  })

  test('restore into a data dir this user cannot write → one line naming it, exit 2, the data dir left empty', () => {
    const dataDir = populatedDataDir()
    const backupDir = join(sharedTemp(), 'backup')
    expect(cli(['backup', backupDir], { PLATFORM_DATA_DIR: dataDir }).code).toBe(0)
    chmodSync(backupDir, 0o755)
    for (const name of readdirSync(backupDir)) chmodSync(join(backupDir, name), 0o644)
    const target = join(sharedTemp(), 'rootonly')
    mkdirSync(target, { mode: 0o755 })
    const out = asNobody(['restore', backupDir], { PLATFORM_DATA_DIR: target })
    expect(out.code).toBe(2)
    const line = expectOneLine(out)
    expect(line).toContain('cannot be read or written by this user (EACCES)')
    expect(line).toContain(target)
    expect(readdirSync(target)).toEqual([])
  })
})

describe('modes', () => {
  test('a data dir the operator made 0755 → the server narrows it to 0700', () => {
    const dataDir = join(sharedTemp(), 'data')
    mkdirSync(dataDir, { mode: 0o755 })
    chmodSync(dataDir, 0o755)
    const out = cli(['admin', 'create-user', '--username', 'fay', '--email', 'fay@example.com'], { PLATFORM_DATA_DIR: dataDir })
    expect(out.code).toBe(0)
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
  })

  test('a shared data dir another user owns → it works on and one log line says why the mode stays', () => {
    const dataDir = join(sharedTemp(), 'data')
    mkdirSync(dataDir)
    chmodSync(dataDir, 0o777)
    const out = asNobody(['admin', 'create-user', '--username', 'gus', '--email', 'gus@example.com'], { PLATFORM_DATA_DIR: dataDir })
    expect(out.code).toBe(0)
    const warning = out.stderr.split('\n').filter((line) => line.includes('the data dir stays readable by other users'))
    expect(warning).toHaveLength(1)
    expect(JSON.parse(warning[0]!)).toMatchObject({ dataDir, reason: 'EPERM' })
    expect(statSync(dataDir).mode & 0o777).toBe(0o777)
  })

  test('backup → every file it writes, the database included, is 0600', () => {
    const dataDir = populatedDataDir()
    const backupDir = join(sharedTemp(), 'backup')
    expect(cli(['backup', backupDir], { PLATFORM_DATA_DIR: dataDir }).code).toBe(0)
    const files = readdirSync(backupDir)
    expect(files).toContain('platform.db')
    for (const name of files) expect({ name, mode: statSync(join(backupDir, name)).mode & 0o777 }).toEqual({ name, mode: 0o600 })
  })
})
