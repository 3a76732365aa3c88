import { type Deps, runtimeSlot } from '../../deps'

/** How long a password-checked sign-in waits for its second factor. */
export const TICKET_TTL_SECONDS = 5 * 60
/** Wrong second factors one ticket survives; then the password must be given again. */
export const MAX_TICKET_FAILURES = 5
/** Past this many tickets, expired ones are swept before a new one is issued. */
const SWEEP_THRESHOLD = 10_000

/** A sign-in whose password was right, waiting for the second factor. */
export interface SignInTicket {
  uid: number
  remember: boolean
  expiresAt: number
  failures: number
  /** The WebAuthn challenge last requested for this sign-in. */
  challenge?: string
}

/**
 * Tickets of half-finished sign-ins, in memory: they live five minutes, and a restart only asks
 * the user for the password again.
 */
export class SignInTickets {
  private readonly tickets = new Map<string, SignInTicket>()

  /** `now` in seconds since the epoch, fractions kept. */
  constructor(private readonly now: () => number) {}

  issue(uid: number, remember: boolean): string {
    const now = this.now()
    if (this.tickets.size >= SWEEP_THRESHOLD) for (const [id, t] of this.tickets) if (t.expiresAt <= now) this.tickets.delete(id)
    const id = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
    this.tickets.set(id, { uid, remember, expiresAt: now + TICKET_TTL_SECONDS, failures: 0 })
    return id
  }

  /** The live ticket, or undefined when unknown or expired. */
  find(id: string): SignInTicket | undefined {
    const ticket = this.tickets.get(id)
    if (ticket && ticket.expiresAt > this.now()) return ticket
    this.tickets.delete(id)
    return undefined
  }

  /** Ends the ticket; true for the one caller that ended it (two parallel finishes: one session). */
  take(id: string): boolean {
    return this.tickets.delete(id)
  }

  /** Counts a wrong second factor; the ticket ends at the limit. */
  countFailure(id: string): void {
    const ticket = this.tickets.get(id)
    if (ticket && ++ticket.failures >= MAX_TICKET_FAILURES) this.tickets.delete(id)
  }
}

const SIGN_IN_TICKETS = runtimeSlot('sign-in tickets', (deps) => new SignInTickets(() => deps.clock.now() / 1000))

/** The tickets of one app instance (tests build many apps in one process). */
export const signInTickets = (deps: Deps): SignInTickets => deps.runtimes.of(SIGN_IN_TICKETS)
