import { and, count, eq, gt, lte, or, sql } from 'drizzle-orm'
import { signInAttempts, signInFailures, signInKnownAddresses } from '../../../db/schema/sign-in'
import type { Executor } from '../../storage/database'

export type WindowKind = 'account' | 'pair' | 'address'

export interface FailureWindow {
  failures: number
  resetsAtMs: number
}

/** Where each kind of window counts: an account alone, an account from an address, an address alone. */
const keyOf = (kind: WindowKind, account: string, address: string) => ({
  kind,
  account: kind === 'address' ? '' : account,
  address: kind === 'account' ? '' : address,
})

/** The windows of `account` from `address` that have not reset at `nowMs`. */
export async function findLiveWindows(
  db: Executor,
  account: string,
  address: string,
  nowMs: number,
): Promise<Partial<Record<WindowKind, FailureWindow>>> {
  const rows = await db
    .select()
    .from(signInFailures)
    .where(
      and(
        gt(signInFailures.resetsAtMs, nowMs),
        or(
          and(eq(signInFailures.kind, 'account'), eq(signInFailures.account, account)),
          and(eq(signInFailures.kind, 'pair'), eq(signInFailures.account, account), eq(signInFailures.address, address)),
          and(eq(signInFailures.kind, 'address'), eq(signInFailures.address, address)),
        ),
      ),
    )
  return Object.fromEntries(rows.map((r) => [r.kind, { failures: r.failures, resetsAtMs: r.resetsAtMs }]))
}

/** Checks in flight at `nowMs`: of `account` from `address`, of `account`, and from `address`. */
export async function countInFlight(db: Executor, account: string, address: string, nowMs: number): Promise<Record<WindowKind, number>> {
  const [row] = await db
    .select({
      pair: sql<number>`coalesce(sum(${signInAttempts.account} = ${account} and ${signInAttempts.address} = ${address}), 0)`,
      account: sql<number>`coalesce(sum(${signInAttempts.account} = ${account}), 0)`,
      address: sql<number>`coalesce(sum(${signInAttempts.address} = ${address}), 0)`,
    })
    .from(signInAttempts)
    .where(and(gt(signInAttempts.expiresAtMs, nowMs), or(eq(signInAttempts.account, account), eq(signInAttempts.address, address))))
  return { pair: Number(row?.pair ?? 0), account: Number(row?.account ?? 0), address: Number(row?.address ?? 0) }
}

/** True when `account` proved its password from `address` and that is still remembered at `nowMs`. */
export async function isKnownAddress(db: Executor, account: string, address: string, nowMs: number): Promise<boolean> {
  const [row] = await db
    .select({ n: count() })
    .from(signInKnownAddresses)
    .where(
      and(eq(signInKnownAddresses.account, account), eq(signInKnownAddresses.address, address), gt(signInKnownAddresses.untilMs, nowMs)),
    )
  return (row?.n ?? 0) > 0
}

export async function insertAttempt(tx: Executor, account: string, address: string, expiresAtMs: number): Promise<number> {
  const [row] = await tx.insert(signInAttempts).values({ account, address, expiresAtMs }).returning({ id: signInAttempts.id })
  return row!.id
}

export async function deleteAttempt(tx: Executor, id: number): Promise<void> {
  await tx.delete(signInAttempts).where(eq(signInAttempts.id, id))
}

/** Counts one failure in the `kind` window of `account` and `address`; a window that has reset starts again at 1. */
export async function addFailure(tx: Executor, kind: WindowKind, account: string, address: string, nowMs: number, windowMs: number) {
  const restart = sql`${signInFailures.resetsAtMs} <= ${nowMs}`
  await tx
    .insert(signInFailures)
    .values({ ...keyOf(kind, account, address), failures: 1, resetsAtMs: nowMs + windowMs })
    .onConflictDoUpdate({
      target: [signInFailures.kind, signInFailures.account, signInFailures.address],
      set: {
        failures: sql`case when ${restart} then 1 else ${signInFailures.failures} + 1 end`,
        resetsAtMs: sql`case when ${restart} then ${nowMs + windowMs} else ${signInFailures.resetsAtMs} end`,
      },
    })
}

/** Drops the account's and the pair's failures (the address keeps its own). */
export async function clearAccountFailures(tx: Executor, account: string, address: string): Promise<void> {
  for (const kind of ['account', 'pair'] as const) {
    const key = keyOf(kind, account, address)
    await tx
      .delete(signInFailures)
      .where(and(eq(signInFailures.kind, kind), eq(signInFailures.account, key.account), eq(signInFailures.address, key.address)))
  }
}

export async function rememberAddress(tx: Executor, account: string, address: string, untilMs: number): Promise<void> {
  await tx
    .insert(signInKnownAddresses)
    .values({ account, address, untilMs })
    .onConflictDoUpdate({ target: [signInKnownAddresses.account, signInKnownAddresses.address], set: { untilMs } })
}

/** Deletes windows that have reset, checks whose process never gave a verdict, and addresses no longer remembered. */
export async function deleteExpired(tx: Executor, nowMs: number): Promise<void> {
  await tx.delete(signInFailures).where(lte(signInFailures.resetsAtMs, nowMs))
  await tx.delete(signInAttempts).where(lte(signInAttempts.expiresAtMs, nowMs))
  await tx.delete(signInKnownAddresses).where(lte(signInKnownAddresses.untilMs, nowMs))
}
