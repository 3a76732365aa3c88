import { Database as BunSqlite } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { startServer } from '../support/process'
import { backupDuringWrites, fetchFrom, restoredInstanceServes } from './scenarios'
import { cli } from './support'

const oneLine = (text: string) => text.trim().split('\n')

describe('backup and restore', () => {
  test('backup while the server writes, restore, a second instance on it → consistent copy; tokens, sealed secrets and avatars carry over', async () => {
    const dataDir = tempDir()
    const server = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
    try {
      const first = await backupDuringWrites(fetchFrom(server.base), dataDir)
      await restoredInstanceServes(first)
    } finally {
      server.child.kill('SIGTERM')
      await server.child.exited
    }
  }, 120_000)

  test('a backup of a data dir whose key comes from PLATFORM_SECRET_KEY → no key in it, and the note says to keep the key', () => {
    const dataDir = tempDir()
    const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_SECRET_KEY: 'ab'.repeat(32) }
    expect(cli(['migrate'], env).code).toBe(0)
    const dir = join(tempDir(), 'backup')
    const out = cli(['backup', dir], env)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('PLATFORM_SECRET_KEY')
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.keyIncluded).toBe(false)
    expect(existsSync(join(dir, 'secret.key'))).toBe(false)
  })

  test("a remote libSQL DATABASE_URL → the backup holds key and files, says the server's own backups apply, and never contacts it", () => {
    const dataDir = tempDir()
    expect(cli(['admin', 'create-user', '--username', 'x', '--email', 'x@example.com'], { PLATFORM_DATA_DIR: dataDir }).code).toBe(0)
    const dir = join(tempDir(), 'backup')
    const out = cli(['backup', dir], { PLATFORM_DATA_DIR: dataDir, DATABASE_URL: 'libsql://db.invalid?authToken=secret-token' })
    expect(out.code).toBe(0)
    expect(out.stdout).toContain("libSQL server libsql://db.invalid: it is not in this backup, that server's own backups apply")
    expect(out.stdout).not.toContain('secret-token')
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
    expect(manifest.schemaVersion).toBe('remote')
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(['secret.key'])
  })

  describe('bad input → one line, exit 2, nothing changed', () => {
    const madeBackup = () => {
      const dataDir = tempDir()
      expect(cli(['admin', 'create-user', '--username', 'x', '--email', 'x@example.com'], { PLATFORM_DATA_DIR: dataDir }).code).toBe(0)
      const dir = join(tempDir(), 'backup')
      expect(cli(['backup', dir], { PLATFORM_DATA_DIR: dataDir }).code).toBe(0)
      return dir
    }
    const refusedRestore = (backupDir: string, target = join(tempDir(), 'restored')) => {
      const before = existsSync(target) ? readdirSync(target) : undefined
      const out = cli(['restore', backupDir], { PLATFORM_DATA_DIR: target })
      expect(out.code).toBe(2)
      expect(oneLine(out.stderr)).toHaveLength(1)
      expect(existsSync(target) ? readdirSync(target) : undefined).toEqual(before)
      return out.stderr
    }

    test('restore from a directory that does not exist or holds no manifest', () => {
      expect(refusedRestore(join(tempDir(), 'nothing-here'))).toContain('is not a backup: no readable manifest.json')
      const empty = tempDir()
      expect(refusedRestore(empty)).toContain('is not a backup')
      writeFileSync(join(empty, 'manifest.json'), '{"format": 1}')
      expect(refusedRestore(empty)).toContain('is not a backup')
    })

    test('restore from a backup with a changed byte or a missing file', () => {
      const dir = madeBackup()
      const db = readFileSync(join(dir, 'platform.db'))
      db[db.length - 1] ^= 0xff
      writeFileSync(join(dir, 'platform.db'), db)
      expect(refusedRestore(dir)).toContain('the backup is damaged: platform.db does not match its digest')
      const other = madeBackup()
      Bun.spawnSync(['rm', join(other, 'secret.key')])
      expect(refusedRestore(other)).toContain('secret.key is missing')
    })

    test('restore into a data dir that is not empty', () => {
      const target = tempDir()
      writeFileSync(join(target, 'notes.txt'), 'mine')
      expect(refusedRestore(madeBackup(), target)).toContain('is not empty: restore only into a new or empty data dir')
      expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('mine')
    })

    test('restore of a backup whose schema is newer than this program', () => {
      const dir = madeBackup()
      const db = new BunSqlite(join(dir, 'platform.db'))
      db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', 99999999999999)")
      db.close()
      // Made consistent again, as a newer program would have written it.
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
      const bytes = readFileSync(join(dir, 'platform.db'))
      manifest.files[0] = { path: 'platform.db', bytes: bytes.length, sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex') }
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
      expect(refusedRestore(dir)).toMatch(/schema version \d+, newer than platform-api .* knows \(schema version \d+\)/)
    })

    test('backup into a directory that is not empty; backup or restore without exactly one DIR', () => {
      const dataDir = tempDir()
      const target = tempDir()
      writeFileSync(join(target, 'keep'), 'x')
      const out = cli(['backup', target], { PLATFORM_DATA_DIR: dataDir })
      expect(out.code).toBe(2)
      expect(oneLine(out.stderr)[0]).toContain('is not empty: a backup goes into a new or empty directory')
      expect(readdirSync(target)).toEqual(['keep'])
      expect(cli(['backup'], { PLATFORM_DATA_DIR: dataDir }).code).toBe(2)
      expect(cli(['restore', 'a', 'b'], { PLATFORM_DATA_DIR: dataDir }).code).toBe(2)
    })
  })
})
