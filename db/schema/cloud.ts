import { sql } from 'drizzle-orm'
import { integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * A user's cloud credential. `block` is the provider block without its secret fields (JSON);
 * `sealedSecrets` is the JSON of the secret fields, sealed with the secret box, never returned.
 */
export const cloudCredentials = sqliteTable(
  'cloud_credentials',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    type: text('type').notNull(),
    block: text('block').notNull(),
    sealedSecrets: text('sealed_secrets').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [uniqueIndex('cloud_credentials_owner_name').on(t.ownerId, t.name)],
)
