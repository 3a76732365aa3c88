import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import packageJson from '../../package.json'
import { rfc3339 } from '../clock'
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

/** True when the database answers a trivial query. */
export async function isReady(db: Database): Promise<boolean> {
  try {
    await db.ping()
    return true
  } catch {
    return false
  }
}
