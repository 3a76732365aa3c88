import { sql } from 'drizzle-orm'
import { integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * TOTP enrollment of a user (at most one). The secret is sealed with the data key because it
 * must be replayed to check codes; the scratch token is only verified, so only its hash is kept.
 * `last_used_step` makes each code single-use.
 */
export const twoFactors = sqliteTable('two_factors', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  uid: integer('uid').notNull().references(() => users.id, { onDelete: 'cascade' }),
  sealedSecret: text('sealed_secret').notNull(),
  scratchHash: text('scratch_hash').notNull().default(''),
  lastUsedStep: integer('last_used_step').notNull().default(0),
  createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
}, (t) => [uniqueIndex('two_factors_uid').on(t.uid)])
