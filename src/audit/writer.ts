import { closeSync, openSync, writeSync } from 'node:fs'
import { type Deps, runtimeSlot } from '../deps'
import { runWithoutCompanions } from '../storage/write-companion'
import { type AuditDraft, eventLine, presentEvent } from './event'
import type { AuditEvent } from './schemas'
import * as store from './store'

/**
 * Events written after the fact (refusals, failures, calls that changed no row, proxied writes,
 * streams), and later facts about events already written (how the request ended, how a stream
 * closed). Whatever is queued while one batch commits goes in the next: one transaction, one
 * fsync, for many events (group commit), so a busy proxy does not pay a commit per write.
 * Every event, once committed, goes to the sinks: the audit log and the message bus.
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

/**
 * How long an event nobody waits for (a proxied write) may wait for its batch. Every commit
 * empties the caches of hot reads (storage/commit-cache.ts: token sign-ins, cluster access), so a
 * commit per proxied write would cost each write a token check; one a second costs nothing.
 */
const LATER_MS = 1000

const UNHEARD: Settle<number> = { resolve: () => undefined, reject: () => undefined }

export class AuditWriter {
  readonly #queue: Pending[] = []
  #flushing: Promise<void> | undefined
  #later: ReturnType<typeof setTimeout> | undefined
  readonly #sinks: AuditSink[] = []
  readonly #releases: (() => void)[] = []

  constructor(private readonly deps: Deps) {}

  /** Queues a new event; resolves with its id once committed. */
  append(draft: AuditDraft): Promise<number> {
    return this.#enqueue((settle) => ({ op: 'append', draft, settle }))
  }

  /** Queues a new event nobody waits for: committed with the next batch, within LATER_MS. Failures are logged. */
  appendLater(draft: AuditDraft): void {
    this.#queue.push({ op: 'append', draft, settle: UNHEARD })
    this.#later ??= setTimeout(() => {
      this.#later = undefined
      this.#startFlush()
    }, LATER_MS)
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

  /** Resolves once everything queued so far has committed (or failed), events queued for later included. */
  async drain(): Promise<void> {
    if (this.#queue.length > 0) this.#startFlush()
    while (this.#flushing) await this.#flushing
  }

  #enqueue(make: (settle: Settle<number>) => Pending): Promise<number> {
    const done = new Promise<number>((resolve, reject) => this.#queue.push(make({ resolve, reject })))
    this.#startFlush()
    return done
  }

  /** Commits what is queued (and what comes meanwhile) unless a batch is being written already. */
  #startFlush(): void {
    clearTimeout(this.#later)
    this.#later = undefined
    // Whatever request queued it, the batch is nobody's change: its write carries no companion.
    this.#flushing ??= runWithoutCompanions(() => this.#flush()).finally(() => {
      this.#flushing = undefined
    })
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0)
      const appends = batch.filter((p) => p.op === 'append')
      try {
        const ids = await this.deps.db.write(async (tx) => {
          for (const p of batch) if (p.op === 'update') await store.updateEvent(tx, p.id, p.facts)
          return store.insertEvents(
            tx,
            appends.map((p) => p.draft),
          )
        })
        const idOf = new Map<Pending, number>(appends.map((p, i) => [p, ids[i]!]))
        for (const p of batch) if (p.op === 'update') idOf.set(p, p.id)
        for (const [p, id] of idOf) p.settle.resolve(id)
        this.#emit(batch.map((p) => ({ ...p.draft, id: idOf.get(p)! })))
      } catch (error) {
        this.deps.log.error('audit events not written', {
          count: batch.length,
          error: error instanceof Error ? error.message : String(error),
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
      deps.log.error('audit log line not written', { error: error instanceof Error ? error.message : String(error) })
    }
  }
  return [sink, fd === undefined ? undefined : () => closeSync(fd)]
}
