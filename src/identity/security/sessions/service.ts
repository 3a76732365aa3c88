import { nowSeconds, rfc3339 } from '../../../clock'
import type { Deps } from '../../../deps'
import { AppError } from '../../../errors'
import { SESSION_IDLE_SECONDS } from '../../sessions/service'
import * as store from '../../sessions/store'

export const Messages = {
  sessionNotFound: 'session not found',
} as const

/** The user's live sessions (expired and idle ones left out), `current` marking the caller's own. */
export async function listSessions(deps: Deps, uid: number, currentSessionId: number | undefined) {
  const now = nowSeconds(deps.clock)
  const rows = await store.listSessionsOfUser(deps.db.read, uid)
  return rows
    .filter((row) => row.expiresAt > now && row.lastSeenAt + SESSION_IDLE_SECONDS > now)
    .map((row) => ({
      sid: row.sid,
      createdAt: rfc3339(row.createdAt),
      lastSeenAt: rfc3339(row.lastSeenAt * 1000),
      ip: row.ip,
      userAgent: row.userAgent,
      current: row.id === currentSessionId,
    }))
}

/** Ends the user's session `sid` and returns the remaining ones. Throws notFound for another user's or an unknown sid. */
export async function revokeSession(deps: Deps, uid: number, sid: string, currentSessionId: number | undefined) {
  const gone = await deps.db.write((tx) => store.deleteSessionBySid(tx, uid, sid))
  if (!gone) throw new AppError('notFound', Messages.sessionNotFound)
  return listSessions(deps, uid, currentSessionId)
}
