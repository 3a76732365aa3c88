import { eq } from 'drizzle-orm'
import { deploymentFacts } from '../../db/schema/shared-files'
import type { Executor } from './database'

/** Facts every process sharing the database must agree on (db/schema/shared-files.ts), by name. */
export async function readFact(db: Executor, name: string): Promise<string | undefined> {
  const [row] = await db.select({ value: deploymentFacts.value }).from(deploymentFacts).where(eq(deploymentFacts.name, name))
  return row?.value
}

/** Sets `name` to `value`, or only when it is not set yet (`onlyFirst`). */
export async function writeFact(tx: Executor, name: string, value: string, { onlyFirst = false } = {}): Promise<void> {
  const insert = tx.insert(deploymentFacts).values({ name, value })
  await (onlyFirst ? insert.onConflictDoNothing() : insert.onConflictDoUpdate({ target: deploymentFacts.name, set: { value } }))
}
