import { Database as BunSqlite } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import type { Config } from '../config'
import { databaseFileRefusal, localDatabaseFile } from '../storage/database'
import { appliedMigrations, copyDatabaseInto, planMigrations, upgradeBackupDir } from '../storage/migrations'
import { BackupManifest } from './schemas'
import { buildInfo } from './service'

/**
 * `backup DIR` and `restore DIR` (docs/operations.md, "Backup and restore"). A backup is a
 * directory: the database copied consistently while the server runs (VACUUM INTO), the data key,
 * every file of the data dir that is not a cache, and manifest.json (written last) listing each
 * with its size and sha256, with the program's version and the database's schema version.
 */

/** What the data dir holds that a backup leaves out: caches rebuilt on demand, the copies made before upgrades, unpacked Helm. */
const NOT_BACKED_UP = new Set(['charts', 'backups', 'tools', 'sandbox.kubeconfig'])
const DATABASE_FILE = 'platform.db'
const KEY_FILE = 'secret.key'
const MANIFEST = 'manifest.json'
const FILES = 'files'

/** Input the commands refuse, changing nothing (exit 2). */
export class BadBackupInput extends Error {}

const BackupMessages = {
  notEmpty: (dir: string) => `${dir} is not empty: a backup goes into a new or empty directory`,
  notABackup: (dir: string) => `${dir} is not a backup: no readable manifest.json`,
  corrupt: (path: string, why: string) => `the backup is damaged: ${path} ${why}`,
  targetNotEmpty: (dir: string) => `the data dir ${dir} is not empty: restore only into a new or empty data dir`,
  databaseExists: (path: string) => `${path} exists: restore does not overwrite a database`,
  remoteTarget:
    "DATABASE_URL names a remote libSQL server: restore its data with that server's own tools (this command restores local databases only)",
  remoteSource: (url: string) =>
    `the database is on the libSQL server ${url}: it is not in this backup, that server's own backups apply (the data key and files are)`,
} as const

const isEmptyDir = (dir: string) => !existsSync(dir) || (statSync(dir).isDirectory() && readdirSync(dir).length === 0)
const sha256File = (path: string) => new Bun.CryptoHasher('sha256').update(readFileSync(path)).digest('hex')
const localDatabasePath = (config: Config) => {
  const file = localDatabaseFile(config.databaseUrl)
  return file === undefined ? undefined : resolve(file)
}
const remoteName = (url: string) => url.replace(/\?.*$/, '').replace(/\/\/[^@/]*@/, '//')

/** The data dir's files a backup keeps (paths relative to it): not the database, the key, caches or files being written (dot names). */
function dataFiles(dataDir: string, databasePath: string | undefined): string[] {
  // The configured database and the default one (left behind when DATABASE_URL moved to a server).
  const databases = [databasePath, join(dataDir, DATABASE_FILE)].filter((p) => p !== undefined)
  const skip = new Set([KEY_FILE, ...databases.flatMap((db) => ['', '-wal', '-shm', '-journal'].map((suffix) => `${db}${suffix}`))])
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      const rel = relative(dataDir, path)
      if (entry.name.startsWith('.') || (dir === dataDir && NOT_BACKED_UP.has(entry.name)) || skip.has(path) || skip.has(rel)) continue
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) found.push(rel)
    }
  }
  if (existsSync(dataDir)) walk(dataDir)
  return found.sort()
}

export interface BackupResult {
  manifest: BackupManifest
  /** A note for the operator (a remote database, a key from the environment). */
  notes: string[]
}

/** Codes of a file or directory this user may not read or write (or a full disk): the operator's to fix. */
const INACCESSIBLE = /^(EACCES|EPERM|EROFS|ENOSPC|EDQUOT)$/

/**
 * Runs a backup or restore; a file or directory this user cannot read or write becomes one line
 * naming it (BadBackupInput). Both write nothing before their first write succeeds, so a directory
 * that cannot be written is left as it was.
 */
function refusingInaccessible<T>(work: () => T): T {
  try {
    return work()
  } catch (error) {
    // A failed copy names its source as `path` and its target as `dest`: the target is the one refused.
    const { code, path, dest } = error as { code?: unknown; path?: unknown; dest?: unknown }
    const refused = typeof dest === 'string' ? dest : path
    if (typeof code === 'string' && INACCESSIBLE.test(code) && typeof refused === 'string')
      throw new BadBackupInput(
        `${refused} cannot be read or written by this user (${code}): choose a directory this user may write, or run as the owner of the data dir`,
      )
    throw error
  }
}

/** Writes a backup of `config`'s data into `dir` (new or empty). Throws BadBackupInput, ConfigError (a damaged database). */
export function backup(config: Config, dir: string): BackupResult {
  return refusingInaccessible(() => writeBackup(config, dir))
}

function writeBackup(config: Config, dir: string): BackupResult {
  const target = resolve(dir)
  if (!isEmptyDir(target)) throw new BadBackupInput(BackupMessages.notEmpty(dir))
  mkdirSync(target, { recursive: true, mode: 0o700 })
  const notes: string[] = []
  const entries: string[] = []
  const databasePath = localDatabasePath(config)
  let schemaVersion: BackupManifest['schemaVersion'] = 'remote'
  if (databasePath) {
    copyDatabase(databasePath, join(target, DATABASE_FILE), upgradeBackupDir(config))
    const copy = new BunSqlite(join(target, DATABASE_FILE), { readonly: true })
    schemaVersion = appliedMigrations(copy).count
    copy.close()
    entries.push(DATABASE_FILE)
  } else notes.push(BackupMessages.remoteSource(remoteName(config.databaseUrl)))
  const keyFile = join(config.dataDir, KEY_FILE)
  const keyIncluded = config.secretKey === undefined && existsSync(keyFile)
  if (keyIncluded) {
    copyFileSync(keyFile, join(target, KEY_FILE))
    entries.push(KEY_FILE)
  } else if (config.secretKey !== undefined)
    notes.push('the data key comes from PLATFORM_SECRET_KEY: it is not in the backup, keep it with it')
  for (const rel of dataFiles(config.dataDir, databasePath)) {
    const to = join(target, FILES, rel)
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 })
    copyFileSync(join(config.dataDir, rel), to)
    entries.push(join(FILES, rel))
  }
  const info = buildInfo(config)
  const manifest: BackupManifest = {
    format: 1,
    program: { version: info.version, commit: info.commit },
    createdAt: new Date().toISOString(),
    schemaVersion,
    keyIncluded,
    files: entries.map((path) => ({ path, bytes: statSync(join(target, path)).size, sha256: sha256File(join(target, path)) })),
  }
  writeFileSync(join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  return { manifest, notes }
}

/** The backup's manifest once every file it lists is there with its size and digest. Throws BadBackupInput. */
function verifyBackup(dir: string): BackupManifest {
  let manifest: unknown
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'))
  } catch {
    throw new BadBackupInput(BackupMessages.notABackup(dir))
  }
  if (!Value.Check(BackupManifest, manifest)) throw new BadBackupInput(BackupMessages.notABackup(dir))
  for (const entry of manifest.files) {
    const path = resolve(dir, entry.path)
    if (!path.startsWith(resolve(dir) + sep)) throw new BadBackupInput(BackupMessages.corrupt(entry.path, 'lies outside the backup'))
    if (!existsSync(path)) throw new BadBackupInput(BackupMessages.corrupt(entry.path, 'is missing'))
    if (statSync(path).size !== entry.bytes || sha256File(path) !== entry.sha256)
      throw new BadBackupInput(BackupMessages.corrupt(entry.path, 'does not match its digest'))
  }
  return manifest
}

/** The database at `databasePath` copied into `to`; a damaged or unreadable database is databaseFileRefusal's one line. */
function copyDatabase(databasePath: string, to: string, upgradeBackups: string): void {
  let source: BunSqlite | undefined
  try {
    source = new BunSqlite(databasePath, { readonly: true })
    source.exec('PRAGMA busy_timeout = 5000')
    copyDatabaseInto(source, to)
  } catch (error) {
    // A file system error names its path (the target's, for refusingInaccessible); SQLite's are about the source.
    if ((error as { path?: unknown }).path !== undefined) throw error
    throw databaseFileRefusal(databasePath, error, upgradeBackups) ?? error
  } finally {
    source?.close()
  }
}

/**
 * Restores the backup in `dir` into `config`'s data dir, which must be new or empty (and the
 * database file absent), after checking every digest and that this program knows the backup's
 * schema. Nothing is written before every check passed. Throws BadBackupInput, ConfigError (newer schema).
 */
export function restore(config: Config, dir: string): BackupManifest {
  return refusingInaccessible(() => restoreInto(config, dir))
}

function restoreInto(config: Config, dir: string): BackupManifest {
  const manifest = verifyBackup(dir)
  if (!isEmptyDir(config.dataDir)) throw new BadBackupInput(BackupMessages.targetNotEmpty(config.dataDir))
  const databasePath = localDatabasePath(config)
  const hasDatabase = manifest.files.some((f) => f.path === DATABASE_FILE)
  if (hasDatabase && !databasePath) throw new BadBackupInput(BackupMessages.remoteTarget)
  if (hasDatabase && databasePath) {
    if (existsSync(databasePath)) throw new BadBackupInput(BackupMessages.databaseExists(databasePath))
    const copy = new BunSqlite(join(dir, DATABASE_FILE), { readonly: true })
    try {
      planMigrations(appliedMigrations(copy))
    } finally {
      copy.close()
    }
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  for (const { path } of manifest.files) {
    const to =
      path === DATABASE_FILE
        ? databasePath!
        : path === KEY_FILE
          ? join(config.dataDir, KEY_FILE)
          : join(config.dataDir, relative(FILES, path))
    mkdirSync(dirname(to), { recursive: true, mode: 0o700 })
    copyFileSync(join(dir, path), to)
  }
  return manifest
}
