import { Database as BunSqlite } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { users } from '../../db/schema'
import { findUserByName, insertUser, updateUser } from '../../src/identity/store'
import { type Database, isUniqueViolation, openDatabase } from '../../src/storage/database'
import { makeTestApp, tempDir } from '../support/app'

const newUser = (name: string) => ({ name, lowerName: name.toLowerCase(), email: `${name}@example.com` })

for (const driver of ['bun:sqlite', 'libsql'] as const) {
  const open = (): Promise<Database> => openDatabase(`file:${join(tempDir(), 'platform.db')}`, { driver })

  describe(`storage on ${driver}`, () => {
    test('a write callback that throws after inserting leaves nothing behind', async () => {
      const db = await open()
      await expect(
        db.write(async (tx) => {
          await insertUser(tx, newUser('ghost1'))
          await Bun.sleep(1) // an await inside the transaction, where drizzle-on-bun:sqlite loses atomicity
          throw new Error('abort')
        }),
      ).rejects.toThrow('abort')
      expect(await findUserByName(db.read, 'ghost1')).toBeUndefined()
      await db.close()
    })

    test('50 concurrent read-modify-write transactions lose no update', async () => {
      const db = await open()
      const user = await db.write((tx) => insertUser(tx, newUser('counter')))
      await Promise.all(
        Array.from({ length: 50 }, () =>
          db.write(async (tx) => {
            const current = (await findUserByName(tx, 'counter'))!.pageSize
            await Bun.sleep(0)
            await updateUser(tx, user.id, { pageSize: current + 1 })
          }),
        ),
      )
      expect((await findUserByName(db.read, 'counter'))!.pageSize).toBe(50)
      await db.close()
    })

    test('readers do not see a row until its transaction commits', async () => {
      const db = await open()
      let release!: () => void
      const gate = new Promise<void>((r) => {
        release = r
      })
      let inserted!: () => void
      const insertedSignal = new Promise<void>((r) => {
        inserted = r
      })
      const writing = db.write(async (tx) => {
        await insertUser(tx, newUser('pending'))
        inserted()
        await gate
      })
      await insertedSignal
      expect(await findUserByName(db.read, 'pending')).toBeUndefined()
      release()
      await writing
      expect(await findUserByName(db.read, 'pending')).toBeDefined()
      await db.close()
    })

    test('a UNIQUE violation is recognised as such', async () => {
      const db = await open()
      await db.write((tx) => insertUser(tx, newUser('twin')))
      const error = await db
        .write(async (tx) => {
          await tx.insert(users).values(newUser('twin'))
        })
        .catch((e: unknown) => e)
      expect(isUniqueViolation(error)).toBe(true)
      await db.close()
    })

    test('committed rows survive closing and reopening the file', async () => {
      const path = `file:${join(tempDir(), 'platform.db')}`
      const first = await openDatabase(path, { driver })
      await first.write((tx) => insertUser(tx, newUser('durable')))
      await first.close()
      const second = await openDatabase(path, { driver })
      expect((await findUserByName(second.read, 'durable'))?.email).toBe('durable@example.com')
      await second.close()
    })
  })
}

test('a write through the read handle fails instead of bypassing the write queue (bun:sqlite)', async () => {
  const db = await openDatabase(`file:${join(tempDir(), 'platform.db')}`, { driver: 'bun:sqlite' })
  await expect(insertUser(db.read, newUser('sneaky'))).rejects.toThrow(/readonly/)
  await db.close()
})

test('a write while another process holds the write lock waits without freezing this process, and commits once the lock is free (bun:sqlite)', async () => {
  const path = join(tempDir(), 'platform.db')
  const db = await openDatabase(`file:${path}`, { driver: 'bun:sqlite' })
  const otherProcess = new BunSqlite(path)
  otherProcess.run('BEGIN IMMEDIATE')
  let committed = false
  const write = db
    .write((tx) => insertUser(tx, newUser('patient')))
    .then(() => {
      committed = true
    })
  // This process goes on answering (a frozen one would only get here once the write had failed).
  expect(await findUserByName(db.read, 'patient')).toBeUndefined()
  expect(committed).toBe(false)
  otherProcess.run('COMMIT')
  otherProcess.close()
  await write
  expect(committed).toBe(true)
  expect(await findUserByName(db.read, 'patient')).toBeDefined()
  await db.close()
})

test('the app tests run on the driver PLATFORM_DATABASE_DRIVER names (npm run test:libsql), bun:sqlite by default', async () => {
  const t = await makeTestApp()
  expect(t.deps.db.driver).toBe(process.env.PLATFORM_DATABASE_DRIVER === 'libsql' ? 'libsql' : 'bun:sqlite')
})
