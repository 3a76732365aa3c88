import { AsyncLocalStorage } from 'node:async_hooks'
import type { Executor } from './database'

/**
 * Work that joins a transaction it did not start: the audit event of the request the write
 * belongs to (docs/decisions.md §8) commits with the change it records, or not at all.
 */
export interface CommitCompanion {
  /** Runs inside the transaction, after the write's own work and just before COMMIT; throwing rolls both back. */
  beforeCommit(tx: Executor): Promise<void>
  /** Runs once that transaction has committed. */
  afterCommit(): void
}

/** What a piece of work is run with (`runWithCompanions`): asked for a companion each time a write begins. */
export interface CompanionSource {
  /** The companion of a write beginning now, or undefined when this write carries nothing. */
  companionForWrite(): CommitCompanion | undefined
}

const ambient = new AsyncLocalStorage<CompanionSource>()

/** Runs `work` so that every db.write it begins asks `source` for a companion. */
export function runWithCompanions<T>(source: CompanionSource, work: () => T): T {
  return ambient.run(source, work)
}

/** The source the current work runs with, if any (the audit area finds its request record here). */
export function currentCompanionSource(): CompanionSource | undefined {
  return ambient.getStore()
}

/** Runs `work` with no companion source, whatever the caller runs with (writes that are nobody's change). */
export function runWithoutCompanions<T>(work: () => T): T {
  return ambient.exit(work)
}
