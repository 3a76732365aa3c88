import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { AuditEvent } from '../../src/audit/schemas'
import { cli } from '../operations/support'
import { makeTestApp, tempDir } from '../support/app'
import { auditAt } from './support'

/**
 * Commands run on the server (docs/decisions.md §8, `kind: cli`): each state-changing one leaves
 * an event with its command and target, no actor and credential `cli`; a password or token never.
 */

/** The cli events of `dataDir`, oldest first, as a site admin reads them over the API. */
async function cliEvents(dataDir: string): Promise<AuditEvent[]> {
  const t = await makeTestApp({ PLATFORM_DATA_DIR: dataDir })
  const events = await auditAt(t, await t.admin(), '/api/v1/admin/audit?kind=cli&limit=50')
  return events.reverse()
}

const ranOnServer = { kind: 'cli', actor: null, credential: { kind: 'cli' }, outcome: { status: 0, result: 'allowed' } }

describe('commands run on the server', () => {
  test('migrate, admin create-user and admin create-token → one cli event each with the command and its target; no password or token', async () => {
    const dataDir = tempDir()
    const env = { PLATFORM_DATA_DIR: dataDir }
    expect(cli(['migrate'], env).code).toBe(0)
    const created = cli(
      ['admin', 'create-user', '--username', 'carol', '--email', 'carol@example.com', '--password', 'hunter2hunter2'],
      env,
    )
    expect(created.code).toBe(0)
    const token = cli(['admin', 'create-token', '--username', 'carol', '--name', 'deploy'], env)
    expect(token.code).toBe(0)
    const events = await cliEvents(dataDir)
    expect(events).toMatchObject([
      { ...ranOnServer, command: 'migrate', target: {} },
      { ...ranOnServer, command: 'admin create-user', target: { username: 'carol' } },
      { ...ranOnServer, command: 'admin create-token', target: { username: 'carol', name: 'deploy' } },
    ])
    const stored = JSON.stringify(events)
    expect(stored).not.toContain('hunter2hunter2')
    expect(stored).not.toContain(token.stdout.trim())
  }, 30_000)

  test('restore → a cli event in the restored database naming the backup directory', async () => {
    const source = tempDir()
    expect(cli(['admin', 'create-user', '--username', 'dave', '--email', 'dave@example.com'], { PLATFORM_DATA_DIR: source }).code).toBe(0)
    const backupDir = join(tempDir(), 'backup')
    expect(cli(['backup', backupDir], { PLATFORM_DATA_DIR: source }).code).toBe(0)
    const target = join(tempDir(), 'data')
    expect(cli(['restore', backupDir], { PLATFORM_DATA_DIR: target }).code).toBe(0)
    const events = await cliEvents(target)
    expect(events.at(-1)).toMatchObject({ ...ranOnServer, command: 'restore', target: { dir: backupDir } })
  }, 30_000)

  test('a command that fails → no event', async () => {
    const dataDir = tempDir()
    expect(cli(['admin', 'create-token', '--username', 'nobody-here'], { PLATFORM_DATA_DIR: dataDir }).code).toBe(1)
    expect(await cliEvents(dataDir)).toEqual([])
  }, 30_000)
})
