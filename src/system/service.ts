import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import packageJson from '../../package.json'
import { rfc3339 } from '../clock'
import { messageOf } from '../errors'
import type { Logger } from '../logger'
import type { Database } from '../storage/database'
import type { ServerVersion } from './schemas'

const startedAt = rfc3339(Date.now())

/** The running build: version from package.json; commit and date stamped at build time or read from git. */
export function buildInfo(build: { buildCommit?: string; buildDate?: string }): ServerVersion {
  return {
    version: packageJson.version,
    commit: build.buildCommit ?? gitCommit() ?? 'unknown',
    buildDate: build.buildDate ?? startedAt,
  }
}

let cachedCommit: string | null | undefined
function gitCommit(): string | undefined {
  if (cachedCommit === undefined) {
    try {
      cachedCommit = execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: resolve(import.meta.dir, '../..'),
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .toString()
        .trim()
    } catch {
      cachedCommit = null
    }
  }
  return cachedCommit ?? undefined
}

/**
 * The readiness check of one app: true when the database answers (ping). The first failure after
 * success is logged once with its reason, and a recovery once, however often a prober asks.
 */
export function readinessProbe(db: Database, log: Logger): () => Promise<boolean> {
  let ready = true
  return async () => {
    const failure = await db.ping().then(
      () => undefined,
      (error: unknown) => error,
    )
    if ((failure === undefined) !== ready) {
      ready = failure === undefined
      if (ready) log.info('the database answers again: ready')
      else log.error('the database cannot be read: not ready (GET /readyz answers 503)', { reason: messageOf(failure) })
    }
    return ready
  }
}
