import { and, eq, inArray, lte, or } from 'drizzle-orm'
import { singletonLeases } from '../../db/schema/singletons'
import type { Executor } from '../storage/database'

/**
 * Takes the lease of `name` for `holder` until `untilMs` when it is free (never taken, or run out
 * at `nowMs`), or held by one of `takeFrom` (the holder itself renewing, a holder known dead).
 * True when `holder` now has it.
 */
export async function claimLease(
  tx: Executor,
  lease: { name: string; holder: string; nowMs: number; untilMs: number; takeFrom: string[] },
): Promise<boolean> {
  const free = lte(singletonLeases.expiresAtMs, lease.nowMs)
  const rows = await tx
    .insert(singletonLeases)
    .values({ name: lease.name, holder: lease.holder, expiresAtMs: lease.untilMs })
    .onConflictDoUpdate({
      target: singletonLeases.name,
      set: { holder: lease.holder, expiresAtMs: lease.untilMs },
      setWhere: lease.takeFrom.length > 0 ? or(free, inArray(singletonLeases.holder, lease.takeFrom)) : free,
    })
    .returning({ name: singletonLeases.name })
  return rows.length > 0
}

/** Gives up `holder`'s lease of `name`, so another process may take it at once. */
export async function releaseLease(tx: Executor, name: string, holder: string): Promise<void> {
  await tx.delete(singletonLeases).where(and(eq(singletonLeases.name, name), eq(singletonLeases.holder, holder)))
}

/** The process holding `name`'s lease at `nowMs`, if any. */
export async function findLeaseHolder(db: Executor, name: string, nowMs: number): Promise<string | undefined> {
  const [row] = await db.select().from(singletonLeases).where(eq(singletonLeases.name, name))
  return row && row.expiresAtMs > nowMs ? row.holder : undefined
}
