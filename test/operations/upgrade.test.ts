import { Database as BunSqlite } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/storage/database'
import { KEPT_UPGRADE_BACKUPS, MIGRATIONS_FOLDER } from '../../src/storage/migrations'
import { makeTestApp, tempDir } from '../support/app'
import { cli, previousRelease, sealedSecretsProbe } from './support'

const journalOf = (folder: string) => JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8'))

/** This program's migrations without the last `drop`: the schema of an older build. */
function olderMigrations(drop = 1): string {
  const folder = tempDir('platform-migrations-')
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true })
  const journal = journalOf(folder)
  journal.entries = journal.entries.slice(0, -drop)
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal))
  return folder
}

const appliedCount = (path: string) => {
  const db = new BunSqlite(path, { readonly: true })
  try {
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM __drizzle_migrations').get()!.n
  } finally {
    db.close()
  }
}

describe('upgrades', () => {
  test('a data dir written by the previous release (e02daed) → this one starts on it: its tokens sign in, its sealed secrets open', async () => {
    const old = previousRelease()
    const dataDir = tempDir()
    const oldProgram = { command: [process.execPath, join(old, 'src/main.ts')] }
    const env = { PLATFORM_DATA_DIR: dataDir }
    expect(cli(['admin', 'create-user', '--username', 'olga', '--email', 'olga@example.com', '--admin'], env, oldProgram).code).toBe(0)
    const token = cli(['admin', 'create-token', '--username', 'olga'], env, oldProgram).stdout.trim()
    const systemAccount = sealedSecretsProbe(dataDir, oldProgram)

    expect(cli(['migrate'], env).code).toBe(0)
    expect(sealedSecretsProbe(dataDir)).toBe(systemAccount)
    const t = await makeTestApp(env)
    const me = await t.request('GET', '/api/v1/user', { token })
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('olga')
  }, 60_000)

  test('pending migrations on a database with data → a copy of it as it was in <data>/backups first, the newest 3 kept', async () => {
    const path = join(tempDir(), 'platform.db')
    const older = olderMigrations()
    const backupDir = join(tempDir(), 'backups')
    for (let round = 0; round < KEPT_UPGRADE_BACKUPS + 1; round++) {
      // Back to the older schema each round, so every start has a migration to apply.
      rmSync(path, { force: true })
      const db = await openDatabase(`file:${path}`, { migrationsFolder: older })
      await db.close()
      const before = appliedCount(path)
      await (await openDatabase(`file:${path}`, { backupDir })).close()
      expect(appliedCount(path)).toBe(before + 1)
      // Backups are named by the millisecond: the next round starts in a later one.
      const named = Date.now()
      while (Date.now() === named) await Bun.sleep(1)
    }
    const copies = readdirSync(backupDir)
    expect(copies).toHaveLength(KEPT_UPGRADE_BACKUPS)
    for (const copy of copies) {
      expect(copy).toMatch(new RegExp(`^platform-.*-schema${journalOf(older).entries.length}\\.db$`))
      expect(appliedCount(join(backupDir, copy))).toBe(journalOf(older).entries.length)
    }
  })

  test('a new database or one already current → no copy is made', async () => {
    const dir = tempDir()
    const backupDir = join(dir, 'backups')
    await (await openDatabase(`file:${join(dir, 'platform.db')}`, { backupDir })).close()
    await (await openDatabase(`file:${join(dir, 'platform.db')}`, { backupDir })).close()
    expect(existsSync(backupDir)).toBe(false)
  })

  test('a database migrated by a newer program → refused naming both schema versions, exit 2, nothing changed', () => {
    const dataDir = tempDir()
    const env = { PLATFORM_DATA_DIR: dataDir }
    expect(cli(['migrate'], env).code).toBe(0)
    const known = journalOf(MIGRATIONS_FOLDER).entries.length
    const db = new BunSqlite(join(dataDir, 'platform.db'))
    db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', 99999999999999)")
    db.close()
    const before = readFileSync(join(dataDir, 'platform.db'))
    for (const command of [['migrate'], ['serve', '--port', '0']]) {
      const out = cli(command, env)
      expect(out.code).toBe(2)
      expect(out.stderr.trim().split('\n')).toHaveLength(1)
      expect(out.stderr).toContain(`schema version ${known + 1}`)
      expect(out.stderr).toContain(`(schema version ${known})`)
    }
    expect(readFileSync(join(dataDir, 'platform.db')).equals(before)).toBe(true)
    expect(existsSync(join(dataDir, 'backups'))).toBe(false)
  })

  test('a migration that fails half way → none of the pending ones is applied', async () => {
    const path = join(tempDir(), 'platform.db')
    const older = olderMigrations()
    await (await openDatabase(`file:${path}`, { migrationsFolder: older })).close()
    const broken = tempDir('platform-migrations-')
    cpSync(MIGRATIONS_FOLDER, broken, { recursive: true })
    const journal = journalOf(broken)
    journal.entries.push({ idx: journal.entries.length, version: '6', when: Date.now() + 1000, tag: '9999_broken', breakpoints: true })
    writeFileSync(join(broken, 'meta/_journal.json'), JSON.stringify(journal))
    writeFileSync(join(broken, '9999_broken.sql'), 'CREATE TABLE half_way (id integer);\n--> statement-breakpoint\nTHIS IS NOT SQL;')
    const before = appliedCount(path)
    await expect(openDatabase(`file:${path}`, { migrationsFolder: broken })).rejects.toThrow()
    expect(appliedCount(path)).toBe(before)
    const db = new BunSqlite(path, { readonly: true })
    expect(db.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half_way'").get()).toEqual({ n: 0 })
    db.close()
  })
})
