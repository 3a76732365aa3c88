/**
 * The audit trail's commit thread (docs/api/audit.md, "Same transaction, or before the answer"):
 * a Worker with its own connection to the database file, for bun:sqlite. It commits each batch it
 * is sent in one transaction and answers with the new events' ids. The commit waits here instead
 * of on the event loop, so requests go on being served while a batch commits, and the events they
 * queue meanwhile make the next batch (group commit): the more writes at once, the fewer commits.
 * Its commits are written to the operating system, not fsynced (synchronous = NORMAL): an event
 * survives the process being killed, and the next fsynced commit of the app's own writes, or a
 * checkpoint, takes it to the disk. An fsync per batch cost the proxy a third of its write
 * throughput (docs/benchmarks.md).
 */
import type { Database as BunSqlite } from 'bun:sqlite'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { messageOf } from '../errors'
import { type Executor, StatementCachingSqlite } from '../storage/database'
import * as store from './store'

/** What the thread is sent: the file to open, then batches, then `close`. */
export type CommitThreadRequest =
  | { op: 'open'; file: string }
  | { op: 'commit'; seq: number; appends: store.NewAuditRow[]; updates: { id: number; facts: Partial<store.LaterFacts> }[] }
  | { op: 'close' }

/** The answer to batch `seq`: its appends' ids in order, or why it failed (nothing of it committed); or the file closed. */
export type CommitThreadAnswer = { seq: number; ids: number[] } | { seq: number; error: string } | { closed: true }

/** How long a batch waits for another connection's write lock; the wait is this thread's alone. */
const BUSY_WAIT_MS = 5000

declare const self: Worker

let connection: { sqlite: BunSqlite; db: Executor } | undefined
/** Why the file could not be opened: every batch is answered with it. */
let openFailure: string | undefined

function open(file: string): void {
  try {
    const sqlite = new StatementCachingSqlite(file, { readwrite: true, strict: true })
    sqlite.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${BUSY_WAIT_MS};`)
    connection = { sqlite, db: drizzle({ client: sqlite }) as unknown as Executor }
  } catch (error) {
    openFailure = `the audit commit thread cannot open the database: ${messageOf(error)}`
  }
}

async function commit(request: Extract<CommitThreadRequest, { op: 'commit' }>): Promise<CommitThreadAnswer> {
  if (!connection) return { seq: request.seq, error: openFailure ?? 'the audit commit thread has no database open' }
  const { sqlite, db } = connection
  try {
    sqlite.run('BEGIN IMMEDIATE')
    for (const { id, facts } of request.updates) await store.updateEvent(db, id, facts)
    const ids = await store.insertEvents(db, request.appends)
    sqlite.run('COMMIT')
    return { seq: request.seq, ids }
  } catch (error) {
    if (sqlite.inTransaction) sqlite.run('ROLLBACK')
    return { seq: request.seq, error: messageOf(error) }
  }
}

async function handle(request: CommitThreadRequest): Promise<void> {
  if (request.op === 'open') open(request.file)
  else if (request.op === 'commit') self.postMessage(await commit(request))
  else {
    connection?.sqlite.close()
    connection = undefined
    self.postMessage({ closed: true } satisfies CommitThreadAnswer)
  }
}

// One message at a time: a batch's transaction is over before the next one begins.
let tail = Promise.resolve()
self.onmessage = (event: MessageEvent<CommitThreadRequest>) => {
  const request = event.data
  tail = tail.then(() => handle(request))
}
