/**
 * The time every expiry and age decision reads (sessions, tokens, codes and tickets, limiter
 * windows, credential `exp` claims, usage's "now"), injected through Deps so a test sets or
 * advances it instead of sleeping (test/support/clock.ts). The wall clock stays where time is the
 * outside world's: log lines, row timestamps the database stamps (created, updated, last login),
 * and protocols a peer checks against its own clock (the bus's revocations).
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Whole seconds since the Unix epoch, the unit the stores keep expiries in. */
export const nowSeconds = (clock: Clock) => Math.floor(clock.now() / 1000)

/**
 * The one timestamp form of every answer (docs/decisions.md §1): RFC 3339 in UTC to the second,
 * `2025-10-01T00:00:00Z`, as Gitea and Kubernetes write theirs; never `….000Z` beside it. Takes a
 * Date or Unix milliseconds.
 */
export const rfc3339 = (at: Date | number): string => new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z')
