import type { Database } from '../../storage/database'
import { findUserById, type UserRow } from '../store'
import { sha256Hex } from '../tokens/secrets'
import * as store from './store'

/** A session lives at most this long; "remember me" stretches it. */
const SESSION_TTL_SECONDS = 24 * 3600
const REMEMBERED_SESSION_TTL_SECONDS = 30 * 24 * 3600
/** Unused this long, a session is dead even before it expires. */
export const SESSION_IDLE_SECONDS = 7 * 24 * 3600

const randomText = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')

export interface NewSessionCookies {
  session: store.SessionRow
  /** The cookie value; only its hash is stored. */
  secret: string
  csrfToken: string
  maxAgeSeconds: number
}

/** Starts a server-side session for `user` at `now` (epoch seconds) with a fresh secret (no fixation: nothing is reused). */
export async function startSession(
  db: Database,
  user: UserRow,
  client: { ip: string; userAgent: string; remember: boolean },
  now: number,
): Promise<NewSessionCookies> {
  const secret = randomText(32)
  const csrfToken = randomText(24)
  const ttl = client.remember ? REMEMBERED_SESSION_TTL_SECONDS : SESSION_TTL_SECONDS
  const session = await db.write((tx) =>
    store.insertSession(tx, {
      sid: randomText(16),
      uid: user.id,
      secretHash: sha256Hex(secret),
      csrfToken,
      ip: client.ip,
      userAgent: client.userAgent.slice(0, 512),
      lastSeenAt: now,
      expiresAt: now + ttl,
    }),
  )
  return { session, secret, csrfToken, maxAgeSeconds: ttl }
}

/** The live session behind a cookie value and its user at `now` (epoch seconds); expired, idle or revoked → undefined. */
export async function authenticateSession(
  db: Database,
  secret: string,
  now: number,
): Promise<{ session: store.SessionRow; user: UserRow } | undefined> {
  if (secret.length === 0 || secret.length > 256) return undefined
  const session = await store.findSessionBySecretHash(db.read, sha256Hex(secret))
  if (!session) return undefined
  if (session.expiresAt <= now || session.lastSeenAt + SESSION_IDLE_SECONDS <= now) return undefined
  const user = await findUserById(db.read, session.uid)
  if (!user?.isActive || user.prohibitLogin) return undefined
  if (session.lastSeenAt < now - 60) db.write((tx) => store.touchSession(tx, session.id, now)).catch(() => undefined)
  return { session, user }
}

export async function endSession(db: Database, sessionId: number): Promise<void> {
  await db.write((tx) => store.deleteSession(tx, sessionId))
}
