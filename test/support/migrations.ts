import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sql } from 'drizzle-orm'
import type { Database } from '../../src/storage/database'

const FOLDER = resolve(import.meta.dir, '../../db/migrations')

/**
 * Applies the migration named `<nnnn>_<name>.sql` to the database as it stands (its SQL, statement by
 * statement, in one transaction): how an upgrade meets rows an older version wrote.
 */
export async function applyMigration(db: Database, name: string): Promise<void> {
  const file = readdirSync(FOLDER).find((entry) => entry.endsWith(`_${name}.sql`))
  if (!file) throw new Error(`no migration named ${name}`)
  const statements = readFileSync(join(FOLDER, file), 'utf8').split('--> statement-breakpoint')
  await db.write(async (tx) => {
    for (const statement of statements) await tx.run(sql.raw(statement))
  })
}
