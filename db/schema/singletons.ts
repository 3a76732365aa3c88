import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Which process runs each singleton (src/singletons/service.ts): the holder of a name's lease until
 * `expires_at_ms` (milliseconds since the epoch). A process keeps the lease by renewing it; when it
 * dies the lease runs out and another process takes it. For a periodic job the lease is the right
 * to its next run and lasts one period.
 */
export const singletonLeases = sqliteTable('singleton_leases', {
  name: text('name').primaryKey(),
  /** `<host>:<pid>:<random>` of the holding process (one app instance). */
  holder: text('holder').notNull(),
  expiresAtMs: integer('expires_at_ms').notNull(),
})
