import type { Deps } from '../../deps'
import { sha256Hex } from '../tokens/secrets'
import * as store from './store'

/**
 * Tickets of half-finished sign-ins live in the database, so the second step may reach any process
 * (or machine) and survives a restart. The ticket itself is a random bearer value in a cookie;
 * the database keeps only its SHA-256.
 */

/** How long a password-checked sign-in waits for its second factor. */
export const TICKET_TTL_SECONDS = 5 * 60
/** Wrong second factors one ticket survives; then the password must be given again. */
export const MAX_TICKET_FAILURES = 5

/** A sign-in whose password was right, waiting for the second factor. */
export interface SignInTicket {
  uid: number
  remember: boolean
}

/** Issues a ticket for `uid` and returns its value (the cookie's). */
export async function issueTicket(deps: Deps, uid: number, remember: boolean): Promise<string> {
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const expiresAtMs = deps.clock.now() + TICKET_TTL_SECONDS * 1000
  await deps.db.write((tx) => store.insertTicket(tx, { idHash: sha256Hex(id), uid, remember, expiresAtMs }))
  return id
}

/** The live ticket, or undefined when unknown or expired. */
export async function findTicket(deps: Deps, id: string): Promise<SignInTicket | undefined> {
  const row = await store.findLiveTicket(deps.db.read, sha256Hex(id), deps.clock.now())
  return row && { uid: row.uid, remember: row.remember }
}

/** Ends the ticket; true for the one caller that ended it (two parallel finishes, on any processes: one session). */
export function takeTicket(deps: Deps, id: string): Promise<boolean> {
  return deps.db.write((tx) => store.deleteTicket(tx, sha256Hex(id)))
}

/** Counts a wrong second factor; the ticket ends at MAX_TICKET_FAILURES. */
export function countTicketFailure(deps: Deps, id: string): Promise<void> {
  return deps.db.write((tx) => store.countTicketFailure(tx, sha256Hex(id), MAX_TICKET_FAILURES))
}

/** Keeps the WebAuthn challenge last requested for the ticket's sign-in. */
export function setTicketChallenge(deps: Deps, id: string, challenge: string): Promise<void> {
  return deps.db.write((tx) => store.setTicketChallenge(tx, sha256Hex(id), challenge))
}

/** The ticket's challenge, cleared: a challenge answers once, right or wrong. */
export function takeTicketChallenge(deps: Deps, id: string): Promise<string | undefined> {
  return deps.db.write((tx) => store.takeTicketChallenge(tx, sha256Hex(id)))
}

/** Forgets expired tickets (a periodic singleton). */
export async function sweepTickets(deps: Deps): Promise<void> {
  const nowMs = deps.clock.now()
  await deps.db.write((tx) => store.deleteExpiredTickets(tx, nowMs))
}
