import { expect, test } from 'bun:test'
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

test('a commit thread that cannot open the database fails each event at once, naming why; none waits forever', async () => {
  const t = await makeTestApp({ PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  const writer = new AuditWriter({ ...t.deps, db: { ...t.deps.db, localFile: '/nonexistent/platform.db' } })
  await expect(writer.append(draft('lost-1'))).rejects.toThrow(/cannot open the database/)
  await expect(writer.append(draft('lost-2'))).rejects.toThrow(/cannot open the database/)
  await writer.close()
})
