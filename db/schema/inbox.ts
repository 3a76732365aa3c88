import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * What a user wants delivered to their inbox. `scope` is `org`, `cluster`, `namespace` or
 * `resource`; the columns of narrower scopes are '' for wider ones. `key` is the scope and every
 * identifying column joined, so one subscriber cannot hold the same subscription twice.
 */
export const inboxSubscriptions = sqliteTable(
  'inbox_subscriptions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    subscriberId: integer('subscriber_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    subscriberType: text('subscriber_type').notNull().default('user'),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    orgId: text('org_id').notNull().default(''),
    orgName: text('org_name').notNull().default(''),
    clusterOwnerId: integer('cluster_owner_id').notNull().default(0),
    clusterUid: text('cluster_uid').notNull().default(''),
    clusterName: text('cluster_name').notNull().default(''),
    namespaceUid: text('namespace_uid').notNull().default(''),
    namespaceName: text('namespace_name').notNull().default(''),
    apiGroup: text('api_group').notNull().default(''),
    version: text('version').notNull().default(''),
    resource: text('resource').notNull().default(''),
    resourceName: text('resource_name').notNull().default(''),
    resourceUid: text('resource_uid').notNull().default(''),
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
    updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [uniqueIndex('inbox_subscriptions_key').on(t.subscriberId, t.key), index('inbox_subscriptions_org').on(t.orgId)],
)
