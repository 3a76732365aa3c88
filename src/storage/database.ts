import { Database as BunSqlite } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Client as LibsqlClient, Config as LibsqlConfig } from '@libsql/client'
import { getTableName, sql } from 'drizzle-orm'
import { drizzle as drizzleBun } from 'drizzle-orm/bun-sqlite'
import { migrate as migrateBun } from 'drizzle-orm/bun-sqlite/migrator'
import { migrate as migrateLibsql } from 'drizzle-orm/libsql/migrator'
import { drizzle as drizzleLibsql } from 'drizzle-orm/libsql/web'
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core'
import * as schema from '../../db/schema'
import { ConfigError } from '../config'
import { messageOf } from '../errors'
import {
  APPLIED_MIGRATIONS_SQL,
  type AppliedMigrations,
  appliedMigrations,
  backupBeforeMigrating,
  knownMigrations,
  MIGRATIONS_FOLDER,
  planMigrations,
} from './migrations'
import { currentCompanionSource } from './write-companion'

/**
 * What store functions query through: the shared read handle or the transaction handed to a
 * `write` callback. Both drivers' query builders are awaited the same way, so stores are written
 * once against this type.
 */
export type Executor = BaseSQLiteDatabase<'async', unknown, typeof schema>

interface WriteOptions {
  /**
   * False for a write whose rows no cached value is computed from (audit events): its commit
   * leaves the commit caches of every process standing. Default true.
   */
  touchesCachedRows?: boolean
  /**
   * False: the commit is handed to the operating system without an fsync of its own (bun:sqlite's
   * `synchronous = NORMAL` for this transaction): it survives the process being killed, and the next
   * fsynced commit or checkpoint takes it to the disk. For the audit trail's batches, whose fsync
   * would hold up the event loop (docs/api/audit.md). Default true; remote libSQL commits as it does.
   */
  fsync?: boolean
}

export interface Database {
  /** Reads see only committed data (a separate connection for bun:sqlite, the pool for libSQL). */
  readonly read: Executor
  /**
   * The one write path: callbacks run one at a time, each inside `BEGIN IMMEDIATE … COMMIT`,
   * rolled back when the callback throws. Keep network I/O out of the callback. Work run with a
   * companion source (write-companion.ts) adds its companion's rows to the same transaction.
   */
  write<T>(work: (tx: Executor) => Promise<T>, options?: WriteOptions): Promise<T>
  /**
   * A value that changes with every commit that may touch cached rows (all but the audit trail's
   * batches): at once for this process's writes, within 10 ms (bun:sqlite) or a second (remote
   * libSQL) for another process's. Caches of rows keyed on it never serve what this process has changed.
   */
  changeCounter(): string
  /** Throws when the database cannot answer a trivial query. */
  ping(): Promise<void>
  close(): Promise<void>
  readonly driver: 'bun:sqlite' | 'libsql'
}

export interface OpenOptions {
  driver?: 'bun:sqlite' | 'libsql'
  authToken?: string
  /** Where a local database with data is copied before migrations change it (`<data dir>/backups`); none: no copy. */
  backupDir?: string
  /** The migrations to apply; this program's by default. */
  migrationsFolder?: string
}

/**
 * Opens the database named by `url` (`file:` → bun:sqlite, otherwise libSQL) and applies pending
 * migrations in one transaction, after copying a local database that has data into `backupDir`.
 * Throws ConfigError naming both schema versions when a newer program migrated the database.
 */
export async function openDatabase(url: string, opts: OpenOptions = {}): Promise<Database> {
  const driver = opts.driver ?? (url.startsWith('file:') ? 'bun:sqlite' : 'libsql')
  const migrationsFolder = opts.migrationsFolder ?? MIGRATIONS_FOLDER
  const local = localDatabaseFile(url)
  if (local === undefined || local === ':memory:') {
    return driver === 'bun:sqlite' ? openBunSqlite(filePath(url), migrationsFolder) : openLibsql(url, opts.authToken, migrationsFolder)
  }
  try {
    prepareFile(local, migrationsFolder, opts.backupDir)
    return driver === 'bun:sqlite' ? openBunSqlite(local, migrationsFolder) : await openLibsql(url, opts.authToken, migrationsFolder)
  } catch (error) {
    throw databaseFileRefusal(local, error, opts.backupDir) ?? error
  }
}

/** SQLite's codes for a file that is not, or no longer, a readable database. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT)/
/** Codes of a file or directory this process's user may not open, create or change. */
const DENIED = /^(EACCES|EPERM|EROFS|SQLITE_CANTOPEN|SQLITE_READONLY|SQLITE_PERM)/

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
  }
  return undefined
}

/**
 * The one line an operator can act on when the local database file `path` is damaged or not this
 * user's to open (docs/operations.md, "When the server does not start"): a ConfigError (exit 2)
 * naming the file and what to do; undefined for any other error.
 */
export function databaseFileRefusal(path: string, error: unknown, backupDir?: string): ConfigError | undefined {
  const code = errorCode(error)
  if (code === undefined) return undefined
  if (DAMAGED.test(code)) {
    const copies = backupDir ? `, or the copy kept before the last migrations in ${backupDir}` : ''
    return new ConfigError(
      `the database file ${path} is damaged (${code}: ${messageOf(error)}); it was left as it is: move it away and restore a backup (restore DIR into an empty data dir)${copies}`,
    )
  }
  if (DENIED.test(code)) {
    return new ConfigError(
      `the database file ${path} cannot be opened or changed by this user (${code}): run the command as the user that owns the data dir, or give the data dir and its files to this user (chown -R)`,
    )
  }
  return undefined
}

/** A local database file before a driver opens it: owner-only, not newer than this program, copied before migrating. */
function prepareFile(path: string, migrationsFolder: string, backupDir: string | undefined): void {
  restrictToOwner(path)
  // Before SQLite opens it: with a -wal and -shm left by a crash, SQLite would write over a file that is no database.
  assertDatabaseHeader(path)
  const sqlite = new BunSqlite(path, { readwrite: true, strict: true })
  try {
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_WAIT_MS}`)
    const plan = planMigrations(appliedMigrations(sqlite), knownMigrations(migrationsFolder))
    if (backupDir && plan.pending > 0 && plan.database > 0) backupBeforeMigrating(sqlite, backupDir, plan)
  } finally {
    sqlite.close()
  }
}

/** The file a `file:` database URL names (`file:///abs` as `file:/abs`, without a query); undefined for a server's URL. */
export const localDatabaseFile = (url: string): string | undefined =>
  url.startsWith('file:')
    ? url
        .slice('file:'.length)
        .replace(/^\/\/(?=\/)/, '')
        .replace(/\?.*$/, '')
    : undefined

function filePath(url: string): string {
  const path = localDatabaseFile(url)
  if (path === undefined) throw new Error('bun:sqlite needs a file: URL')
  return path
}

/** Runs queued async work strictly one after another. */
function serialQueue() {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work)
    tail = run.catch(() => undefined)
    return run
  }
}

/**
 * bun:sqlite compiles SQL anew on every prepare() (~50 µs, most of a simple read), while
 * query() keeps compiled statements per SQL text; drizzle only ever calls prepare(). Kept
 * statements are finalized by close(), so the connection really closes then: statements left to
 * the garbage collector would keep it open past a command's exit, leaving the -wal and -shm files.
 */
class StatementCachingSqlite extends BunSqlite {
  override prepare: BunSqlite['prepare'] = (sql) => this.query(sql)
}

function openBunSqlite(path: string, migrationsFolder: string): Database {
  if (path !== ':memory:') restrictToOwner(path)
  const writer = new StatementCachingSqlite(path, { create: true, readwrite: true, strict: true })
  // FULL: every commit is fsynced, so an acknowledged write survives a power cut, not only a kill.
  writer.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = ${BUSY_WAIT_MS}; PRAGMA foreign_keys = ON;`)
  const writeDb = drizzleBun({ client: writer, schema })
  migrateBun(writeDb, { migrationsFolder })
  // From now on a write lock held by another process is waited for without blocking this one (beginImmediate).
  writer.exec('PRAGMA busy_timeout = 0')
  // A second, read-only connection: readers never see the writer's uncommitted rows, and a
  // write through the read handle fails loudly instead of slipping past the queue.
  const reader = path === ':memory:' ? writer : new StatementCachingSqlite(path, { readonly: true, strict: true })
  if (reader !== writer) reader.exec('PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;')
  const readDb = drizzleBun({ client: reader, schema })
  const enqueue = serialQueue()
  let closed = false
  // Own commits are counted here; another process's move the commit_generation row, read at
  // most every 10 ms (the read costs as much as the rest of a cached token sign-in). Not SQLite's
  // data_version: that moves with other processes' audit batches too, which touch no cached row.
  // Compiled on first use (query() keeps it): a database opened with an older schema (an upgrade
  // test's) may lack the table.
  const table = getTableName(schema.commitGeneration)
  const column = schema.commitGeneration.generation.name
  const readGeneration = `SELECT ${column} AS generation FROM ${table}`
  const moveGeneration = `UPDATE ${table} SET ${column} = ${column} + 1`
  const generation = () => reader.query<{ generation: number }, []>(readGeneration).get()?.generation ?? 0
  const bumpGeneration = () => writer.query(moveGeneration).run()
  let localWrites = 0
  let externalVersion = 0
  let askedAt = -Infinity
  // The counter's text is made again only when it moves: every cached read asks for it.
  let counter = '0:0'
  const moved = () => {
    counter = `${localWrites}:${externalVersion}`
  }
  const changeCounter = () => {
    const now = performance.now()
    if (reader !== writer && now - askedAt >= 10) {
      askedAt = now
      const version = generation()
      if (version !== externalVersion) {
        externalVersion = version
        moved()
      }
    }
    return counter
  }
  return {
    driver: 'bun:sqlite',
    changeCounter,
    read: readDb as unknown as Executor,
    write: (work, options) => {
      const companion = currentCompanionSource()?.companionForWrite()
      return enqueue(async () => {
        const relaxed = options?.fsync === false
        if (relaxed) writer.query('PRAGMA synchronous = NORMAL').run()
        try {
          await beginImmediate(writer)
          const tx = writeDb as unknown as Executor
          const result = await work(tx)
          await companion?.beforeCommit(tx)
          const touchesCachedRows = options?.touchesCachedRows !== false
          if (touchesCachedRows) bumpGeneration()
          writer.query('COMMIT').run()
          if (touchesCachedRows) {
            localWrites++
            moved()
          }
          companion?.afterCommit()
          return result
        } catch (error) {
          if (writer.inTransaction) writer.query('ROLLBACK').run()
          throw error
        } finally {
          // The next write's commit is fsynced again, and with it what this one wrote.
          if (relaxed) writer.query('PRAGMA synchronous = FULL').run()
        }
      })
    },
    ping: async () => {
      reader.query('SELECT 1').get()
      if (path !== ':memory:') assertDatabaseHeader(path)
    },
    close: async () => {
      await enqueue(async () => {
        if (closed) return
        closed = true
        writer.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        if (reader !== writer) reader.close()
        writer.close()
      })
    },
  }
}

const SQLITE_HEADER = 'SQLite format 3\0'

/**
 * Throws unless the file at `path` still opens with SQLite's header: an open connection serves
 * from its cache and would not notice the file overwritten, removed or made unreadable under it.
 */
function assertDatabaseHeader(path: string): void {
  const head = Buffer.alloc(SQLITE_HEADER.length)
  const fd = openSync(path, 'r')
  let read: number
  try {
    read = readSync(fd, head, 0, head.length, 0)
  } finally {
    closeSync(fd)
  }
  // A new database in WAL mode is an empty file until its first checkpoint: its pages are all in the -wal file.
  if (read > 0 && head.toString('latin1') !== SQLITE_HEADER)
    throw Object.assign(new Error(`${path} does not start with the SQLite header`), { code: 'SQLITE_NOTADB' })
}

/** How long a write waits for another process's write lock before failing (503 at the edge). */
const BUSY_WAIT_MS = 5000

/**
 * Takes the write lock, waiting (up to BUSY_WAIT_MS) while another process holds it. SQLite's own
 * busy handler would sleep inside the call and freeze this process's event loop, every request
 * with it; this loop waits between tries instead.
 */
async function beginImmediate(writer: BunSqlite): Promise<void> {
  const deadline = performance.now() + BUSY_WAIT_MS
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
    try {
      writer.query('BEGIN IMMEDIATE').run()
      return
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || performance.now() > deadline) throw error
      await Bun.sleep(pauseMs)
    }
  }
}

/**
 * Password hashes, sessions and sealed secrets: the service's user alone may read the database.
 * The file is made (empty is a valid database) or narrowed to 0600 before SQLite opens it; SQLite
 * gives the -wal and -shm files the database's mode, so that covers them too.
 */
function restrictToOwner(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  if (!existsSync(path)) writeFileSync(path, '', { mode: 0o600 })
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600)
}

/**
 * The libSQL client, loaded only when used: a local file needs the native driver (which the built
 * binary does not carry), a remote server only the pure-JavaScript one.
 */
async function libsqlClient(config: LibsqlConfig): Promise<LibsqlClient> {
  if (!config.url.startsWith('file:')) return (await import('@libsql/client/web')).createClient(config)
  try {
    return (await import('@libsql/client')).createClient(config)
  } catch (error) {
    throw new ConfigError(
      `the libSQL driver for a local file cannot be loaded (${messageOf(error)}); the built binary opens file: URLs with bun:sqlite: unset PLATFORM_DATABASE_DRIVER`,
    )
  }
}

async function remoteMigrations(client: LibsqlClient): Promise<AppliedMigrations> {
  const has = await client.execute(APPLIED_MIGRATIONS_SQL.hasTable)
  if (Number(has.rows[0]?.n) === 0) return { count: 0, lastStamp: undefined }
  const row = (await client.execute(APPLIED_MIGRATIONS_SQL.applied)).rows[0]
  return { count: Number(row?.count ?? 0), lastStamp: row?.lastStamp == null ? undefined : Number(row.lastStamp) }
}

async function openLibsql(url: string, authToken: string | undefined, migrationsFolder: string): Promise<Database> {
  // `timeout` applies to every pooled connection (a PRAGMA would reach only one of them). It waits
  // inside SQLite, freezing the event loop while another process writes a local file; failing fast
  // and retrying is no way out here: a local connection whose BEGIN failed busy stays unusable.
  const client = await libsqlClient({ url, timeout: BUSY_WAIT_MS, authToken })
  if (url.startsWith('file:')) await client.execute('PRAGMA journal_mode = WAL')
  else {
    // A remote server's schema is checked here (a local file's was before opening); its own backups apply.
    try {
      planMigrations(await remoteMigrations(client), knownMigrations(migrationsFolder))
    } catch (error) {
      client.close()
      throw error
    }
  }
  const db = drizzleLibsql({ client, schema })
  await migrateLibsql(db, { migrationsFolder })
  const localFile = localDatabaseFile(url)
  const enqueue = serialQueue()
  // A remote server gives no cheap commit signal: count our own commits, and let other writers'
  // changes show within a second by moving the counter with the clock too.
  let localWrites = 0
  return {
    driver: 'libsql',
    changeCounter: () => `${localWrites}:${Math.floor(Date.now() / 1000)}`,
    read: db as unknown as Executor,
    // libSQL fails concurrent interactive transactions with SQLITE_BUSY: the queue keeps one open at a time.
    write: (work, options) => {
      const companion = currentCompanionSource()?.companionForWrite()
      return enqueue(async () => {
        const result = await db.transaction(
          async (tx) => {
            const done = await work(tx as unknown as Executor)
            await companion?.beforeCommit(tx as unknown as Executor)
            return done
          },
          { behavior: 'immediate' },
        )
        if (options?.touchesCachedRows !== false) localWrites++
        companion?.afterCommit()
        return result
      })
    },
    ping: async () => {
      await db.run(sql`SELECT 1`)
      if (localFile !== undefined) assertDatabaseHeader(localFile)
    },
    close: async () => {
      await enqueue(async () => {
        if (!client.closed) client.close()
      })
    },
  }
}

/**
 * Codes of a database that cannot answer now (locked past the busy wait, disk failing or full,
 * a libSQL server out of reach), for which a client should retry later, not a bug.
 */
const UNAVAILABLE =
  /^(SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|PROTOCOL)|HRANA_|SERVER_ERROR|STREAM_EXPIRED|ConnectionRefused|ConnectionClosed|FailedToOpenSocket|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH)/

/** True when `error` (or its cause) says the database cannot answer right now, on either driver. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const { code, extendedCode } = e as { code?: unknown; extendedCode?: unknown }
    if ([code, extendedCode].some((c) => typeof c === 'string' && UNAVAILABLE.test(c))) return true
  }
  return false
}

/** True when `error` (or its cause) is a SQLite UNIQUE constraint failure, on either driver. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return true
    if (/UNIQUE constraint failed/.test(e.message)) return true
  }
  return false
}

/**
 * The columns a SQLite UNIQUE failure names (`clusters.owner_id, clusters.uid`), read from the
 * error or its causes: libSQL's failure is the cause of drizzle's "Failed query" error, whose own
 * message holds only the SQL. Undefined when no UNIQUE failure names its columns.
 */
export function uniqueViolationColumns(error: unknown): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const named = /UNIQUE constraint failed: ([^\n]+)/.exec(e.message)
    if (named) return named[1]
  }
  return undefined
}
