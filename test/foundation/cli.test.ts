import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { tempDir } from '../support/app'

const MAIN = resolve(import.meta.dir, '../../src/main.ts')
const run = (args: string[], env: Record<string, string> = {}) => {
  const out = Bun.spawnSync([process.execPath, MAIN, ...args], { env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'false', ...env } })
  return { code: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() }
}

describe('command line', () => {
  test('--help lists the commands → exit 0', () => {
    const out = run(['--help'])
    expect(out.code).toBe(0)
    for (const word of ['serve', 'migrate', 'admin create-user', 'admin create-token']) expect(out.stdout).toContain(word)
  })

  test('every command help lists has its row in the command table of docs/operations.md', () => {
    const listed = [...run(['--help']).stdout.matchAll(/^ {2}(\S+(?: [a-z][\w-]*)?) {2,}/gm)].map((m) => m[1]!)
    expect(listed.length).toBeGreaterThan(10)
    const table = readFileSync(resolve(import.meta.dir, '../../docs/operations.md'), 'utf8')
    expect(listed.filter((command) => !table.includes(`| \`${command}`))).toEqual([])
  })

  test.each(['serve', 'migrate', 'admin create-user', 'admin create-token'])('%s --help → its usage, exit 0', (command) => {
    const out = run([...command.split(' '), '--help'])
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('Usage:')
  })

  test('an invalid configuration value → a message naming it, exit 2', () => {
    const out = run(['serve'], { PORT: 'eighty', PLATFORM_DATA_DIR: tempDir() })
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('PORT must be a port number')
  })

  test('an unknown mode → exit 2 naming the allowed modes', () => {
    const out = run(['migrate'], { PLATFORM_MODES: 'hosted,space', PLATFORM_DATA_DIR: tempDir() })
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('"space" is not one of them')
  })

  test('an unknown flag → exit 2', () => {
    expect(run(['serve', '--colour']).code).toBe(2)
  })

  test('migrate on an empty data dir → creates the database, exit 0', () => {
    const dataDir = tempDir()
    const out = run(['migrate'], { PLATFORM_DATA_DIR: dataDir })
    expect(out.code).toBe(0)
    expect(Bun.file(`${dataDir}/platform.db`).size).toBeGreaterThan(0)
  })

  test('admin create-user then create-token → the printed token authenticates as that user', async () => {
    const dataDir = tempDir()
    const env = { PLATFORM_DATA_DIR: dataDir }
    const created = run(['admin', 'create-user', '--username', 'carol', '--email', 'carol@example.com'], env)
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/generated password \(shown once\): \S{12,}/)
    const token = run(['admin', 'create-token', '--username', 'carol', '--scopes', 'read:user'], env)
    expect(token.code).toBe(0)
    expect(token.stdout.trim()).toMatch(/^[0-9a-f]{40}$/)
    const { makeTestApp } = await import('../support/app')
    const t = await makeTestApp({ PLATFORM_DATA_DIR: dataDir })
    const res = await t.request('GET', '/api/v1/user', { token: token.stdout.trim() })
    expect((await res.json()).login).toBe('carol')
  })

  test('admin create-user with a taken name → exit 1 with the reason', () => {
    const env = { PLATFORM_DATA_DIR: tempDir() }
    expect(run(['admin', 'create-user', '--username', 'dave', '--email', 'd@example.com', '--password', 'password123'], env).code).toBe(0)
    const again = run(['admin', 'create-user', '--username', 'Dave', '--email', 'd2@example.com', '--password', 'password123'], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('user already exists')
  })

  test('admin create-token with an unknown scope → exit 2', () => {
    const out = run(['admin', 'create-token', '--username', 'x', '--scopes', 'root'], { PLATFORM_DATA_DIR: tempDir() })
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('unknown scope')
  })
})
