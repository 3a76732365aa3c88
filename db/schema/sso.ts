import { sql } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * An organization's single sign-on source (at most one per org, so the org id is its id). The
 * client secret is sealed with the secret box and never returned.
 */
export const orgAuthSources = sqliteTable('org_auth_sources', {
  orgId: integer('org_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  provider: text('provider').notNull(),
  clientId: text('client_id').notNull(),
  sealedClientSecret: text('sealed_client_secret').notNull(),
  discoveryUrl: text('discovery_url').notNull().default(''),
  isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
  enforceForMembers: integer('enforce_for_members', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
})
