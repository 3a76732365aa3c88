import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * A chart source (decisions §4a): a Helm HTTP repository or an OCI registry, configured by site
 * admins. `sealedPassword` is the password sealed with the secret box; it is never returned.
 */
export const chartSources = sqliteTable('chart_sources', {
  name: text('name').primaryKey(),
  url: text('url').notNull(),
  username: text('username'),
  sealedPassword: text('sealed_password'),
  caData: text('ca_data'),
  insecureSkipTlsVerify: integer('insecure_skip_tls_verify', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
})

/**
 * A user's deployment order. `body` is the Order as answered (JSON); `resolved` pins, per
 * package, the chart version and archive digest chosen when the order was created, so renders
 * are reproducible and need no registry once the archive is cached.
 */
export const orders = sqliteTable(
  'orders',
  {
    uid: text('uid').primaryKey(),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    body: text('body').notNull(),
    resolved: text('resolved').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('orders_owner_created').on(t.ownerId, t.createdAt)],
)
