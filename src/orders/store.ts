import { and, count, desc, eq } from 'drizzle-orm'
import { orders } from '../../db/schema/orders'
import type { Executor } from '../storage/database'

export type OrderRow = typeof orders.$inferSelect
export type NewOrder = typeof orders.$inferInsert

export async function insertOrder(db: Executor, order: NewOrder): Promise<void> {
  await db.insert(orders).values(order)
}

/** The owner's order `uid`; undefined for an unknown uid or another user's order. */
export async function findOrder(db: Executor, ownerId: number, uid: string): Promise<OrderRow | undefined> {
  return db
    .select()
    .from(orders)
    .where(and(eq(orders.ownerId, ownerId), eq(orders.uid, uid)))
    .get()
}

/** One page of the owner's orders, newest first, and how many there are. */
export async function listOrders(
  db: Executor,
  ownerId: number,
  limit: number,
  offset: number,
): Promise<{ rows: OrderRow[]; total: number }> {
  const rows = await db
    .select()
    .from(orders)
    .where(eq(orders.ownerId, ownerId))
    .orderBy(desc(orders.createdAt), desc(orders.uid))
    .limit(limit)
    .offset(offset)
    .all()
  const [counted] = await db.select({ n: count() }).from(orders).where(eq(orders.ownerId, ownerId)).all()
  return { rows, total: counted?.n ?? 0 }
}

export async function deleteOrder(db: Executor, ownerId: number, uid: string): Promise<boolean> {
  return (
    (
      await db
        .delete(orders)
        .where(and(eq(orders.ownerId, ownerId), eq(orders.uid, uid)))
        .returning({ uid: orders.uid })
    ).length > 0
  )
}
