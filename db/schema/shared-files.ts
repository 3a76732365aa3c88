import { blob, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Uploaded avatars of users and organizations, in the database rather than the data dir, so every
 * process and machine sharing the database serves them (src/identity/avatars/store.ts).
 */
export const avatarImages = sqliteTable('avatar_images', {
  /** `<account key>-<content digest>.<extension>`: changes with the content, so URLs and ETags follow. */
  name: text('name').primaryKey(),
  bytes: blob('bytes', { mode: 'buffer' }).notNull(),
})

/**
 * Facts the processes sharing the database must agree on. `secret-key-check`: a value sealed with
 * the secret key by the first process, which every later one must be able to open (src/storage/key-check.ts).
 */
export const deploymentFacts = sqliteTable('deployment_facts', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
})

/**
 * One row counting the commits whose rows a process may hold in its caches (every write but the
 * audit trail's batches): each process reads it every few milliseconds and empties its commit caches
 * when it moved (src/storage/database.ts, commit-cache.ts).
 */
export const commitGeneration = sqliteTable('commit_generation', {
  id: integer('id').primaryKey(),
  generation: integer('generation').notNull(),
})
