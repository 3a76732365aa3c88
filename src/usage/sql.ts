import { Database as BunSqlite } from 'bun:sqlite'
import { getTableColumns, type SQL, sql, type Table } from 'drizzle-orm'
import type { Executor } from '../storage/database'

/**
 * Plain SQL for the usage tables, on both drivers. Ingestion writes millions of rows: drizzle's
 * query builder costs ~50 µs a call, more than the insert, so on bun:sqlite the statement goes to
 * the connection directly (cached per SQL text); on libSQL it is bound through drizzle.
 */
export type SqlValue = string | number | null

function bunClientOf(db: Executor): BunSqlite | undefined {
  const client = (db as unknown as { $client?: unknown }).$client
  return client instanceof BunSqlite ? client : undefined
}

function bind(text: string, values: readonly SqlValue[]): SQL {
  const parts = text.split('?')
  if (parts.length - 1 !== values.length) throw new Error(`SQL wants ${parts.length - 1} values, got ${values.length}`)
  const chunks: SQL[] = [sql.raw(parts[0]!)]
  for (let i = 1; i < parts.length; i++) chunks.push(sql`${values[i - 1]}`, sql.raw(parts[i]!))
  return sql.join(chunks)
}

/** Rows of a query as objects keyed by column name. */
export async function queryAll<T>(db: Executor, text: string, values: readonly SqlValue[] = []): Promise<T[]> {
  const client = bunClientOf(db)
  if (client) return client.query(text).all(...values) as T[]
  return db.all<T>(bind(text, values))
}

/** Runs a statement. */
export async function execute(db: Executor, text: string, values: readonly SqlValue[] = []): Promise<void> {
  const client = bunClientOf(db)
  if (client) client.query(text).run(...values)
  else await db.run(bind(text, values))
}

/** Statement texts by (head, rows per statement, suffix): built once, and few, so the connection's statement cache stays small. */
const statementTexts = new Map<string, string>()

function statementText(head: string, width: number, count: number, suffix: string): string {
  const key = `${head}\u0000${width}\u0000${count}\u0000${suffix}`
  let text = statementTexts.get(key)
  if (text === undefined) {
    const tuple = `(${new Array(width).fill('?').join(',')})`
    statementTexts.set(key, (text = `${head} VALUES ${new Array(count).fill(tuple).join(',')} ${suffix}`))
  }
  return text
}

/**
 * Inserts `rows` with `INSERT … VALUES (…),(…) <suffix>`, many rows per statement (one statement
 * per row costs twice as much on bun:sqlite). Statements hold `perStatement`, 64, 16, 4 or 1 rows,
 * so any row count needs only five statement texts.
 */
export async function insertRows(db: Executor, head: string, rows: readonly SqlValue[][], suffix = '', perStatement = 400): Promise<void> {
  if (rows.length === 0) return
  const width = rows[0]!.length
  const sizes = [perStatement, 64, 16, 4, 1].filter((n) => n <= perStatement)
  for (let i = 0; i < rows.length; ) {
    const count = sizes.find((n) => n <= rows.length - i)!
    const values: SqlValue[] = new Array(count * width)
    for (let r = 0; r < count; r++) {
      const row = rows[i + r]!
      for (let c = 0; c < width; c++) values[r * width + c] = row[c]!
    }
    await execute(db, statementText(head, width, count, suffix), values)
    i += count
  }
}

/** `?,?,?` for an IN list of `count` values. */
export const placeholders = (count: number) => new Array(count).fill('?').join(',')

/**
 * `<alias.>column AS key` for each key of a db/schema table: plain SQL takes its names from the schema, so a renamed
 * column follows and a removed or renamed property fails tsc.
 */
export function selectList<T extends Table>(table: T, keys: readonly (keyof T['_']['columns'] & string)[], alias = ''): string {
  const columns: Record<string, { name: string }> = getTableColumns(table)
  return keys.map((key) => `${alias}${columns[key]!.name} AS ${key}`).join(', ')
}
