import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * An object (a database, a backup, ...) that usage events were received for, per org. Besides its
 * latest names, it keeps its last event ("the tail"): monthly and daily integrals already hold the
 * segment that event opened as if it ran its full hour, so appending the next event only corrects
 * that one segment (decisions §5a), and a read clips it at "now".
 */
export const usageObjects = sqliteTable(
  'usage_objects',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    product: text('product').notNull(),
    uid: text('uid').notNull(),
    clusterUid: text('cluster_uid').notNull(),
    clusterName: text('cluster_name').notNull(),
    namespaceUid: text('namespace_uid').notNull(),
    namespace: text('namespace').notNull(),
    apiGroup: text('api_group').notNull(),
    kind: text('kind').notNull(),
    name: text('name').notNull(),
    /** Unix ms of the first and the last event, the last one's order rank and resources. */
    firstAt: integer('first_at').notNull(),
    lastAt: integer('last_at').notNull(),
    lastRank: integer('last_rank').notNull(),
    lastCpuMillis: integer('last_cpu_millis'),
    lastMemoryBytes: integer('last_memory_bytes'),
    lastProd: integer('last_prod').notNull(),
    /** Time of the `deleted` event, when one came. */
    deletedAt: integer('deleted_at'),
  },
  (t) => [uniqueIndex('usage_objects_org_uid').on(t.orgId, t.uid), index('usage_objects_org_product').on(t.orgId, t.product, t.lastAt)],
)

/**
 * Every accepted event, compact: idempotent on (object, time, type); `rank` orders the types of one
 * instant (created, updated, heartbeat, deleted). Resources are null on events without them.
 */
export const usageEvents = sqliteTable(
  'usage_events',
  {
    objectId: integer('object_id').notNull(),
    at: integer('at').notNull(),
    rank: integer('rank').notNull(),
    cpuMillis: integer('cpu_millis'),
    memoryBytes: integer('memory_bytes'),
    prod: integer('prod').notNull(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.at, t.rank] })],
)

/**
 * Per-object monthly integrals (core-minutes, GiB-minutes; `month` is YYYYMM), total and billable,
 * each split PROD / NON-PROD by cluster mode. `activeMs` counts the minutes that make an instance.
 */
export const usageObjectMonths = sqliteTable(
  'usage_object_months',
  {
    objectId: integer('object_id').notNull(),
    month: integer('month').notNull(),
    activeMs: integer('active_ms').notNull(),
    events: integer('events').notNull(),
    cpuProd: real('cpu_prod').notNull(),
    cpuNonProd: real('cpu_nonprod').notNull(),
    memProd: real('mem_prod').notNull(),
    memNonProd: real('mem_nonprod').notNull(),
    billCpuProd: real('bill_cpu_prod').notNull(),
    billCpuNonProd: real('bill_cpu_nonprod').notNull(),
    billMemProd: real('bill_mem_prod').notNull(),
    billMemNonProd: real('bill_mem_nonprod').notNull(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.month] })],
)

/** Per-object daily integrals (`day` = days since 1970-01-01 UTC) for the daily matrices and event counts. */
export const usageObjectDays = sqliteTable(
  'usage_object_days',
  {
    objectId: integer('object_id').notNull(),
    day: integer('day').notNull(),
    activeMs: integer('active_ms').notNull(),
    events: integer('events').notNull(),
    cpu: real('cpu').notNull(),
    mem: real('mem').notNull(),
    billCpu: real('bill_cpu').notNull(),
    billMem: real('bill_mem').notNull(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.day] })],
)

/** Months (YYYYMM) in which an org has any event: its generated months. */
export const usageMonths = sqliteTable(
  'usage_months',
  {
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    month: integer('month').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.month] })],
)

/** Contracts of an org for one product (decisions §5a): paid minutes are billable. */
export const usageContracts = sqliteTable(
  'usage_contracts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    product: text('product').notNull(),
    kind: text('kind').notNull(),
    startAt: integer('start_at').notNull(),
    endAt: integer('end_at'),
    /** JSON array of cluster uids; null covers every cluster of the org. */
    clusterUids: text('cluster_uids'),
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [index('usage_contracts_org').on(t.orgId, t.product)],
)
