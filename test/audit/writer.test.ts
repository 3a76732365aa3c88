import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AuditDraft } from '../../src/audit/event'
import { AuditWriter, auditWriter } from '../../src/audit/writer'
import { insertUser } from '../../src/identity/store'
import { openDatabase } from '../../src/storage/database'
import { makeTestApp } from '../support/app'
import { eventually } from '../support/wait'

const draft = (requestId: string): AuditDraft => ({
  time: new Date(),
  requestId,
  kind: 'api',
  actorId: null,
  actorLogin: null,
  realLogin: null,
  subjectId: null,
  credentialKind: 'none',
  credentialName: null,
  credentialId: null,
  sourceAddress: '192.0.2.1',
  orgId: null,
  org: null,
  cluster: null,
  status: 401,
  result: 'refused',
  method: 'POST',
  route: '/api/v1/orgs',
  target: '{}',
  verb: null,
  objectRef: null,
  command: null,
  exitCode: null,
  endTime: null,
})

// 1,500 events of 24 values each: as one multi-row statement, over SQLite's 32,766 bound values.
test('events appended at once commit in batches and are readable once append resolves, ids in order', async () => {
  const t = await makeTestApp()
  const ids = await Promise.all(Array.from({ length: 1500 }, (_, i) => auditWriter(t.deps).append(draft(`batch-${i}`))))
  expect(ids).toEqual([...ids].sort((a, b) => a - b))
  const rows = await t.deps.db.read.query.auditEvents.findMany()
  expect(rows.map((r) => r.requestId)).toEqual(Array.from({ length: 1500 }, (_, i) => `batch-${i}`))
  expect(rows.map((r) => r.id)).toEqual(ids)
})

test("the audit trail's commits leave the caches of rows standing; another process's write empties them within 10 ms (bun:sqlite)", async () => {
  const t = await makeTestApp({ PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  const other = await openDatabase(t.config.databaseUrl, { driver: 'bun:sqlite' }) // as another process sharing the file would
  try {
    const before = t.deps.db.changeCounter()
    await auditWriter(t.deps).append(draft('not-a-cached-row'))
    // Past the 10 ms between reads of another process's commits: the behaviour under test is that nothing moved.
    await Bun.sleep(30)
    expect(t.deps.db.changeCounter()).toBe(before)
    await other.write((tx) => insertUser(tx, { name: 'elsewhere', lowerName: 'elsewhere', email: 'elsewhere@example.com' }))
    await eventually(() => t.deps.db.changeCounter() !== before)
  } finally {
    await other.close()
  }
})

test("an audit batch commits without an fsync of its own; the platform's writes around it are fsynced (synchronous FULL)", async () => {
  const t = await makeTestApp({ PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  const synchronous = (options?: { fsync: false }) =>
    t.deps.db.write(async (tx) => (await tx.all<{ synchronous: number }>(sql`PRAGMA synchronous`))[0]?.synchronous, options)
  expect(await synchronous()).toBe(2)
  expect(await synchronous({ fsync: false })).toBe(1)
  expect(await synchronous()).toBe(2)
  // A batch that fails leaves the connection fsyncing too.
  await expect(t.deps.db.write(async () => Promise.reject(new Error('no')), { fsync: false })).rejects.toThrow('no')
  expect(await synchronous()).toBe(2)
  await auditWriter(t.deps).append(draft('relaxed'))
  expect(await synchronous()).toBe(2)
})

test('a batch that cannot commit fails each of its events at once, naming why; none waits forever', async () => {
  const t = await makeTestApp()
  const writer = new AuditWriter(t.deps)
  await t.deps.db.close()
  const lost = await Promise.allSettled([writer.append(draft('lost-1')), writer.append(draft('lost-2'))])
  for (const event of lost) expect(event.status === 'rejected' ? String(event.reason) : 'committed').toMatch(/closed/i)
  await writer.close()
})
