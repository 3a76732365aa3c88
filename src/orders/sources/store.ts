import { asc, eq } from 'drizzle-orm'
import { chartSources } from '../../../db/schema/orders'
import { AppError } from '../../errors'
import { type Executor, isUniqueViolation } from '../../storage/database'

export type ChartSourceRow = typeof chartSources.$inferSelect
export type NewChartSource = typeof chartSources.$inferInsert

const StoreMessages = { nameTaken: 'a chart source with this name exists' } as const

export async function listSources(db: Executor): Promise<ChartSourceRow[]> {
  return db.select().from(chartSources).orderBy(asc(chartSources.name)).all()
}

export async function findSource(db: Executor, name: string): Promise<ChartSourceRow | undefined> {
  return db.select().from(chartSources).where(eq(chartSources.name, name)).get()
}

/** Inserts a source; a taken name is `conflict` (409). */
export async function insertSource(db: Executor, source: NewChartSource): Promise<ChartSourceRow> {
  try {
    return (await db.insert(chartSources).values(source).returning())[0]!
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('conflict', StoreMessages.nameTaken, [{ field: 'name', message: 'is already used' }]) : e
  }
}

/** Inserts or replaces a source by name (seeding from PLATFORM_CHART_SOURCES). */
export async function upsertSource(db: Executor, source: NewChartSource): Promise<void> {
  const { name: _name, ...changes } = source
  await db.insert(chartSources).values(source).onConflictDoUpdate({ target: chartSources.name, set: changes })
}

/** Replaces the settings of source `name`; undefined when there is none. */
export async function updateSource(db: Executor, name: string, changes: Omit<NewChartSource, 'name'>): Promise<ChartSourceRow | undefined> {
  return (await db.update(chartSources).set(changes).where(eq(chartSources.name, name)).returning())[0]
}

export async function deleteSource(db: Executor, name: string): Promise<boolean> {
  return (await db.delete(chartSources).where(eq(chartSources.name, name)).returning({ name: chartSources.name })).length > 0
}
