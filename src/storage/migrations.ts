import type { Database as BunSqlite } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import packageJson from '../../package.json'
import { assetPath } from '../assets'
import { type Config, ConfigError } from '../config'

/**
 * The schema migrations this program carries and how a database's schema compares with them.
 * A database's schema version is the number of migrations applied to it; the program's is the
 * number it knows. Drizzle applies every known migration newer than the database's last one.
 */

/** This program's migrations. */
export const MIGRATIONS_FOLDER = assetPath('db/migrations')

/** Automatic backups taken before migrating a database that has data: the newest this many are kept. */
export const KEPT_UPGRADE_BACKUPS = 3

export interface AppliedMigrations {
  /** Migrations recorded in the database (0: a new database). */
  count: number
  /** The `when` stamp of the last one applied (drizzle's created_at). */
  lastStamp: number | undefined
}

export interface SchemaPlan {
  database: number
  program: number
  /** Migrations the program will apply. */
  pending: number
}

/** The migrations `migrationsFolder` holds (default: this program's), oldest first. */
export function knownMigrations(migrationsFolder = MIGRATIONS_FOLDER) {
  return readMigrationFiles({ migrationsFolder })
}

/** The SQL that reads AppliedMigrations; a database without drizzle's table has none. */
export const APPLIED_MIGRATIONS_SQL = {
  hasTable: "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
  applied: 'SELECT count(*) AS count, max(created_at) AS lastStamp FROM __drizzle_migrations',
} as const

/** Reads what a bun:sqlite connection's database has applied. */
export function appliedMigrations(sqlite: BunSqlite): AppliedMigrations {
  const { n } = sqlite.query<{ n: number }, []>(APPLIED_MIGRATIONS_SQL.hasTable).get()!
  if (n === 0) return { count: 0, lastStamp: undefined }
  const row = sqlite.query<{ count: number; lastStamp: number | null }, []>(APPLIED_MIGRATIONS_SQL.applied).get()!
  return { count: row.count, lastStamp: row.lastStamp === null ? undefined : Number(row.lastStamp) }
}

const schemaMessages = {
  newer: (plan: Pick<SchemaPlan, 'database' | 'program'>) =>
    `the database is at schema version ${plan.database}, newer than platform-api ${packageJson.version} knows (schema version ${plan.program}): run the newer platform-api that wrote it, or restore a backup made before the upgrade`,
} as const

/**
 * How the program's migrations meet the database's; throws ConfigError naming both versions when
 * the database was migrated by a newer program (its last migration is one this program does not have).
 */
export function planMigrations(applied: AppliedMigrations, migrations = knownMigrations()): SchemaPlan {
  const program = migrations.length
  const lastKnown = migrations.at(-1)?.folderMillis ?? 0
  if (applied.lastStamp !== undefined && applied.lastStamp > lastKnown)
    throw new ConfigError(schemaMessages.newer({ database: applied.count, program }))
  const pending = migrations.filter((m) => applied.lastStamp === undefined || m.folderMillis > applied.lastStamp).length
  return { database: applied.count, program, pending }
}

/** Where a local database is copied before migrations change it (docs/operations.md, "Upgrades"). */
export const upgradeBackupDir = (config: Pick<Config, 'dataDir'>) => join(config.dataDir, 'backups')

/**
 * A consistent copy of the open database into `target` (SQLite's VACUUM INTO: one read transaction,
 * so writers go on meanwhile and the copy is what was committed when it began). `target` must not exist.
 * The copy is owner-only like the database: SQLite fills an empty file made 0600 instead of creating one by the umask.
 */
export function copyDatabaseInto(sqlite: BunSqlite, target: string): void {
  writeFileSync(target, '', { mode: 0o600, flag: 'wx' })
  sqlite.query('VACUUM INTO ?').run(target)
}

/**
 * Before migrating a database that has data: its copy in `backupDir`, named for the time and the
 * schema version it had; only the newest KEPT_UPGRADE_BACKUPS are kept. Returns the copy's path.
 */
export function backupBeforeMigrating(sqlite: BunSqlite, backupDir: string, plan: SchemaPlan, now = new Date()): string {
  mkdirSync(backupDir, { recursive: true, mode: 0o700 })
  const stamp = now.toISOString().replace(/[:.]/g, '-')
  const target = join(backupDir, `platform-${stamp}-schema${plan.database}.db`)
  if (!existsSync(target)) copyDatabaseInto(sqlite, target)
  const copies = readdirSync(backupDir)
    .filter((name) => /^platform-.*-schema\d+\.db$/.test(name))
    .sort()
  for (const old of copies.slice(0, -KEPT_UPGRADE_BACKUPS)) rmSync(join(backupDir, old), { force: true })
  return target
}
