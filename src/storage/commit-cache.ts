import type { MaybePromise } from '../maybe-promise'
import type { Database } from './database'

/** What `peek` finds for a key with no value computed since the last commit. */
export const NOT_CACHED: unique symbol = Symbol('not cached')

/**
 * Values computed from the database, kept while its change counter stands still: any commit
 * empties them, so a cached value is never older than this process's last write. For hot reads
 * whose inputs are all rows (token sign-ins, the caller's own profile). `now` gives a hit at once (a
 * promise only when it computes), and `peek` only a hit, for callers whose hit path must not pay for a
 * chain of promises.
 */
export function commitCache<T>(limit = 10_000) {
  const byDatabase = new WeakMap<Database, Map<string, { counter: string; value: T }>>()
  const entriesOf = (db: Database) => {
    let entries = byDatabase.get(db)
    if (!entries) byDatabase.set(db, (entries = new Map()))
    return entries
  }
  const cached = (entries: Map<string, { counter: string; value: T }>, key: string, counter: string): T | typeof NOT_CACHED => {
    const hit = entries.get(key)
    return hit && hit.counter === counter ? hit.value : NOT_CACHED
  }
  const fill = async (entries: Map<string, { counter: string; value: T }>, key: string, counter: string, compute: () => Promise<T>) => {
    const value = await compute()
    if (entries.size >= limit) entries.clear()
    entries.set(key, { counter, value })
    return value
  }
  const now = (db: Database, key: string, compute: () => Promise<T>): MaybePromise<T> => {
    const counter = db.changeCounter() // read before the rows: a commit after this point misses next time
    const entries = entriesOf(db)
    const hit = cached(entries, key, counter)
    return hit === NOT_CACHED ? fill(entries, key, counter, compute) : hit
  }
  const get = (db: Database, key: string, compute: () => Promise<T>): Promise<T> => Promise.resolve(now(db, key, compute))
  return Object.assign(get, { now, peek: (db: Database, key: string) => cached(entriesOf(db), key, db.changeCounter()) })
}
