import { test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { makeTestApp } from '../support/app'

test('dbg', async () => {
  const a = await makeTestApp()
  const b = await makeTestApp({ PLATFORM_DATA_DIR: a.config.dataDir })
  for (const [n, t] of [
    ['a', a],
    ['b', b],
    ['a', a],
  ] as const) {
    try {
      await t.deps.db.write(async (tx) => {
        await tx.run(sql`select 1`)
      })
      console.log(n, 'ok')
    } catch (e) {
      for (let x: unknown = e; x instanceof Error; x = x.cause)
        console.log(n, 'ERR', (x as { code?: string }).code, x.message.slice(0, 200))
    }
  }
})
