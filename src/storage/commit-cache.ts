import type { Database } from './database'

/**
 * Values computed from the database, kept while its change counter stands still: any commit
 * empties them, so a cached value is never older than this process's last write. For hot reads
 * whose inputs are all rows (token sign-ins, the caller's own profile).
 */
export function commitCache<T>(limit = 10_000) {
  const byDatabase = new WeakMap<Database, Map<string, { counter: string; value: T }>>()
  return async (db: Database, key: string, compute: () => Promise<T>): Promise<T> => {
    const counter = db.changeCounter() // read before the rows: a commit after this point misses next time
    let entries = byDatabase.get(db)
    if (!entries) byDatabase.set(db, (entries = new Map()))
    const hit = entries.get(key)
    if (hit && hit.counter === counter) return hit.value
    const value = await compute()
    if (entries.size >= limit) entries.clear()
    entries.set(key, { counter, value })
    return value
  }
}
