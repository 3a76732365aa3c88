import type { Deps } from '../deps'
import { AppError } from '../http/errors'

/**
 * Failed password attempts allowed within one window: for one account from one client address,
 * for one account from everywhere, and for one client address over all accounts. The per-pair
 * limit stops a guesser early; the account limit is higher so that one attacker's guesses cannot
 * lock the owner out, while guessing spread over many addresses is still stopped.
 */
export const MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS = 5
export const MAX_FAILURES_PER_ACCOUNT = 30
export const MAX_FAILURES_PER_ADDRESS = 20
export const FAILURE_WINDOW_SECONDS = 15 * 60
/** Past this many tracked keys, expired windows are swept before a new key is added. */
const SWEEP_THRESHOLD = 10_000

export const Messages = {
  tooManyAttempts: 'too many failed sign-in attempts, retry later',
} as const

interface Window {
  failures: number
  resetsAt: number
}

/**
 * The key an account's failures are counted under: the user id when the login names a user (so
 * name, email and Basic attempts share one count), else the lower-cased login as typed.
 */
export function accountKey(user: { id: number } | undefined, login: string): string {
  return user ? `user:${user.id}` : `login:${login.trim().toLowerCase()}`
}

/**
 * Counts password attempts per account (see `accountKey`), per account and client address, and
 * per client address, in fixed windows. An attempt takes its slot before any hashing and counts
 * as a failure until it proves the password, so parallel guesses cannot overtake the count: at
 * most the limit is ever hashed, and a locked-out guesser costs no argon2.
 */
export class SignInLimiter {
  private readonly accounts = new Map<string, Window>()
  private readonly pairs = new Map<string, Window>()
  private readonly addresses = new Map<string, Window>()

  constructor(private readonly now: () => number = () => Date.now() / 1000) {}

  /**
   * Takes an attempt's slot: throws tooManyRequests (429, Retry-After) when the account, the pair
   * or the address is locked out, else counts the attempt as a failure until `recordSuccess`.
   */
  takeSlot(account: string, address: string): void {
    this.assertAllowed(account, address)
    this.recordFailure(account, address)
  }

  private assertAllowed(account: string, address: string): void {
    const now = this.now()
    const blocked = [this.live(this.accounts, account, now, MAX_FAILURES_PER_ACCOUNT),
      this.live(this.pairs, pairKey(account, address), now, MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS),
      this.live(this.addresses, address, now, MAX_FAILURES_PER_ADDRESS)].filter((w): w is Window => w !== undefined)
    if (blocked.length === 0) return
    const retryAfter = Math.max(1, Math.ceil(Math.max(...blocked.map((w) => w.resetsAt)) - now))
    throw new AppError('tooManyRequests', Messages.tooManyAttempts, [], { 'retry-after': String(retryAfter) })
  }

  private recordFailure(account: string, address: string): void {
    const now = this.now()
    this.bump(this.accounts, account, now)
    this.bump(this.pairs, pairKey(account, address), now)
    this.bump(this.addresses, address, now)
  }

  /** A correct password clears the account's counts; the address gets back the slot the attempt took. */
  recordSuccess(account: string, address: string): void {
    this.accounts.delete(account)
    this.pairs.delete(pairKey(account, address))
    const window = this.addresses.get(address)
    if (window && window.failures > 0) window.failures--
  }

  /** The key's window when it has reached `max` failures and has not yet reset. */
  private live(map: Map<string, Window>, key: string, now: number, max: number): Window | undefined {
    const window = map.get(key)
    if (!window) return undefined
    if (window.resetsAt <= now) {
      map.delete(key)
      return undefined
    }
    return window.failures >= max ? window : undefined
  }

  private bump(map: Map<string, Window>, key: string, now: number): void {
    const window = map.get(key)
    if (window && window.resetsAt > now) {
      window.failures++
      return
    }
    if (map.size >= SWEEP_THRESHOLD) for (const [k, w] of map) if (w.resetsAt <= now) map.delete(k)
    map.set(key, { failures: 1, resetsAt: now + FAILURE_WINDOW_SECONDS })
  }
}

const pairKey = (account: string, address: string) => `${account}\u0000${address}`

const limiters = new WeakMap<Deps, SignInLimiter>()

/** The limiter of one app instance (tests build many apps in one process). */
export function signInLimiter(deps: Deps): SignInLimiter {
  let limiter = limiters.get(deps)
  if (!limiter) limiters.set(deps, (limiter = new SignInLimiter()))
  return limiter
}

/** The client address Bun saw, or '' when the request did not come over a socket (in-process tests). */
export function clientAddress(server: { requestIP(request: Request): { address: string } | null } | null, request: Request): string {
  return server?.requestIP(request)?.address ?? ''
}
