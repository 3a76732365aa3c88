import { closeSync, openSync, writeSync } from 'node:fs'
import { type Deps, runtimeSlot } from '../deps'
import { messageOf } from '../errors'
import { runWithoutCompanions } from '../storage/write-companion'
import { type AuditDraft, eventLine, presentEvent } from './event'
import type { AuditEvent } from './schemas'
import * as store from './store'

/**
 * Events written after the fact (refusals, failures, calls that changed no row, proxied writes,
 * streams), and later facts about events already written (how the request ended, how a stream
 * closed). Whatever is queued while one batch commits goes in the next: one transaction for many
 * events (group commit), through the app's one write path. Every event, once committed, goes to
 * the sinks: the audit log and the message bus.
 */

/** Gets every committed event (and again each time one learns more); must not throw. */
export type AuditSink = (event: AuditEvent, orgId: number | null) => void

type Pending =
  | { op: 'append'; draft: AuditDraft; settle: Settle<number> }
  | { op: 'update'; id: number; draft: AuditDraft; facts: Partial<store.LaterFacts>; settle: Settle<number> }

interface Settle<T> {
  resolve(value: T): void
  reject(error: unknown): void
}

type Update = { id: number; facts: Partial<store.LaterFacts> }

/**
 * No cached value is computed from audit rows: a batch's commit leaves the commit caches standing.
 * Its commit is not fsynced (docs/api/audit.md): an fsync would hold up the event loop for every
 * batch, and the next fsynced commit of the platform's own writes takes the events to the disk.
 */
const AUDIT_BATCH = { touchesCachedRows: false, fsync: false } as const

/** Commits one batch through the app's one write path, all of it or none: the appends' ids in order. */
function commitBatch(deps: Deps, appends: AuditDraft[], updates: Update[]): Promise<number[]> {
  // Whatever request queued it, the batch is nobody's change: its write carries no companion.
  return runWithoutCompanions(() =>
    deps.db.write(async (tx) => {
      for (const { id, facts } of updates) await store.updateEvent(tx, id, facts)
      return store.insertEvents(tx, appends)
    }, AUDIT_BATCH),
  )
}

export class AuditWriter {
  readonly #queue: Pending[] = []
  #flushing: Promise<void> | undefined
  readonly #sinks: AuditSink[] = []
  readonly #releases: (() => void)[] = []

  constructor(private readonly deps: Deps) {}

  /** Queues a new event; resolves with its id once committed. */
  append(draft: AuditDraft): Promise<number> {
    return this.#enqueue((settle) => ({ op: 'append', draft, settle }))
  }

  /** Queues later facts of event `id` (whose draft, updated, the sinks get); resolves once committed. */
  update(id: number, draft: AuditDraft, facts: Partial<store.LaterFacts>): Promise<number> {
    return this.#enqueue((settle) => ({ op: 'update', id, draft: { ...draft, ...facts }, facts, settle }))
  }

  /** Hands an event that committed with the change it records to the sinks. */
  committed(id: number, draft: AuditDraft): void {
    this.#emit([{ ...draft, id }])
  }

  /** Adds a sink; `release` runs when the writer closes, after the last events reached it. */
  addSink(sink: AuditSink, release?: () => void): void {
    this.#sinks.push(sink)
    if (release) this.#releases.push(release)
  }

  /** Writes what is queued, then releases the sinks. */
  async close(): Promise<void> {
    await this.drain()
    for (const release of this.#releases.splice(0)) release()
  }

  /** Resolves once everything queued so far has committed (or failed). */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing
  }

  #enqueue(make: (settle: Settle<number>) => Pending): Promise<number> {
    const done = new Promise<number>((resolve, reject) => this.#queue.push(make({ resolve, reject })))
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined
    })
    return done
  }

  /** Commits what is queued, batch after batch, until a batch commits and nothing came meanwhile. */
  async #flush(): Promise<void> {
    // One turn of the event loop first: the answers that came in the same turn as the first event
    // queue theirs too, and one commit takes them all (a commit costs several times an event).
    await new Promise((turned) => setImmediate(turned))
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0)
      const appends = batch.filter((p) => p.op === 'append')
      const updates = batch.filter((p) => p.op === 'update')
      try {
        const ids = await commitBatch(
          this.deps,
          appends.map((p) => p.draft),
          updates.map(({ id, facts }) => ({ id, facts })),
        )
        const idOf = new Map<Pending, number>(appends.map((p, i) => [p, ids[i]!]))
        for (const p of updates) idOf.set(p, p.id)
        for (const [p, id] of idOf) p.settle.resolve(id)
        this.#emit(batch.map((p) => ({ ...p.draft, id: idOf.get(p)! })))
      } catch (error) {
        this.deps.log.error('audit events not written', {
          count: batch.length,
          error: messageOf(error),
        })
        for (const p of batch) p.settle.reject(error)
      }
    }
  }

  #emit(rows: store.AuditRow[]): void {
    if (this.#sinks.length === 0) return
    for (const row of rows) {
      const event = presentEvent(row)
      for (const sink of this.#sinks) sink(event, row.orgId)
    }
  }
}

const WRITER = runtimeSlot(
  'audit writer',
  (deps) => {
    const writer = new AuditWriter(deps)
    if (deps.config.auditLog) writer.addSink(...auditLogSink(deps, deps.config.auditLog))
    return writer
  },
  (writer) => writer.close(),
)

/** The app's audit writer. */
export const auditWriter = (deps: Deps): AuditWriter => deps.runtimes.of(WRITER)

/**
 * PLATFORM_AUDIT_LOG: one JSON line per event, to stdout (`-`) or appended to a file (made
 * owner-only). A line that cannot be written is reported, never thrown. With the sink, what
 * releases its file.
 */
function auditLogSink(deps: Deps, target: string): [AuditSink, (() => void)?] {
  const fd = target === '-' ? undefined : openSync(target, 'a', 0o600)
  const write = fd === undefined ? (line: string) => process.stdout.write(line) : (line: string) => writeSync(fd, line)
  const sink: AuditSink = (event) => {
    try {
      write(`${eventLine(event)}\n`)
    } catch (error) {
      deps.log.error('audit log line not written', { error: messageOf(error) })
    }
  }
  return [sink, fd === undefined ? undefined : () => closeSync(fd)]
}
