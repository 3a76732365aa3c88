import type { Deps } from '../deps'
import { AppError } from '../errors'
import type { Page, Paged } from '../http/pagination'
import { runAsSingleton, type SingletonJob } from '../singletons/service'
import { runWithoutCompanions } from '../storage/write-companion'
import { presentEvent } from './event'
import type { AuditEvent, AuditQuery } from './schemas'
import * as store from './store'
import { auditWriter } from './writer'

export const Messages = {
  badTime: 'must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z',
} as const

/** Whose events a read route may see: every event, one org's, or one user's. */
export type AuditView = { all: true } | { orgId: number } | { userId: number }

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

/** A `since`/`until` value as a Date. Throws invalid naming the field. */
function timeOf(field: 'since' | 'until', text: string | undefined): Date | undefined {
  if (text === undefined || text === '') return undefined
  const time = RFC3339.test(text) ? new Date(text) : undefined
  if (!time || Number.isNaN(time.getTime()))
    throw new AppError('invalid', `${field} ${Messages.badTime}`, [{ field, message: Messages.badTime }])
  return time
}

/**
 * One page of the events `view` may see that match the query's filters (actor login, kind,
 * cluster, result, since, until), newest first. Throws invalid for a malformed time.
 */
export async function listAuditEvents(deps: Deps, view: AuditView, query: AuditQuery, page: Page): Promise<Paged<AuditEvent>> {
  const filter: store.AuditFilter = {
    ...('orgId' in view ? { orgId: view.orgId } : {}),
    ...('userId' in view ? { userId: view.userId } : {}),
    actorLogin: query.actor || undefined,
    kind: query.kind,
    cluster: query.cluster || undefined,
    result: query.result,
    since: timeOf('since', query.since),
    until: timeOf('until', query.until),
  }
  const { rows, total } = await store.listEvents(deps.db.read, filter, page)
  return { items: rows.map(presentEvent), total }
}

/** Rows deleted per transaction: pruning never holds the write lock for long. */
const PRUNE_BATCH = 5000

/**
 * Deletes events older than PLATFORM_AUDIT_RETENTION_DAYS (docs/decisions.md §8), a batch per
 * transaction; how many went. Run by the process that runs the singletons.
 */
async function pruneAuditEvents(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now() - deps.config.auditRetentionDays * 24 * 3600 * 1000)
  let pruned = 0
  for (;;) {
    const deleted = await runWithoutCompanions(() => deps.db.write((tx) => store.deleteEventsBefore(tx, before, PRUNE_BATCH)))
    pruned += deleted
    if (deleted < PRUNE_BATCH) return pruned
  }
}

/** How often events past their retention are looked for. */
const PRUNE_EVERY_MS = 60 * 60_000

/** Prunes events past PLATFORM_AUDIT_RETENTION_DAYS about hourly, on one process of all sharing the database. */
export const pruneAuditEventsPeriodically = (deps: Deps): SingletonJob =>
  runAsSingleton(deps, 'audit-retention', PRUNE_EVERY_MS, async () => {
    const pruned = await pruneAuditEvents(deps)
    if (pruned > 0) deps.log.info('audit events pruned', { count: pruned })
  })

/** What a command run on the server (docs/decisions.md §8, `kind: cli`) did, and to what. */
export interface CommandRun {
  /** The program's command, e.g. `admin create-user`. */
  command: string
  /** What it acted on (`{username}`, `{cluster}`, `{dir}`); never a password or token. */
  target: Record<string, string>
  /** The cluster it imported or removed, `owner/name`. */
  cluster?: string
}

/**
 * Records a state-changing command that ran to its end: no actor, credential `cli`, outcome 0
 * allowed (its exit code). Resolves once the event is committed.
 */
export async function recordCommand(deps: Deps, run: CommandRun): Promise<void> {
  await auditWriter(deps).append({
    time: new Date(deps.clock.now()),
    requestId: crypto.randomUUID(),
    kind: 'cli',
    actorId: null,
    actorLogin: null,
    realLogin: null,
    subjectId: null,
    credentialKind: 'cli',
    credentialName: null,
    credentialId: null,
    sourceAddress: '',
    orgId: null,
    org: null,
    cluster: run.cluster ?? null,
    status: 0,
    result: 'allowed',
    method: null,
    route: null,
    target: JSON.stringify(run.target),
    verb: null,
    objectRef: null,
    command: JSON.stringify(run.command),
    exitCode: null,
    endTime: null,
  })
}
