import { type Deps, runtimeSlot } from '../deps'
import { AppError } from '../errors'
import { type QueueShare, verifyPassword } from './passwords'

/**
 * Failed password attempts allowed within one window: for one account from one client address,
 * for one account from everywhere, and for one client address over all accounts. The per-pair
 * limit stops a guesser early. The account limit only slows guessing spread over many addresses:
 * past it, an address that has already failed on the account is refused, but one that has not
 * (or that signed in to the account before) may always try, so nobody without the password can
 * lock the owner out.
 */
export const MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS = 5
export const MAX_FAILURES_PER_ACCOUNT = 30
export const MAX_FAILURES_PER_ADDRESS = 20
export const FAILURE_WINDOW_SECONDS = 15 * 60
/** How long an address stays known to an account after a correct password from it. */
const KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600
/** Password checks one client address, one account, and all unknown-user attempts may have waiting for a hash. */
const HASH_LINE_SHARE_PER_ADDRESS = 8
const HASH_LINE_SHARE_PER_ACCOUNT = 8
const HASH_LINE_SHARE_OF_UNKNOWN_USERS = 16
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
function accountKey(user: { id: number } | undefined, login: string): string {
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
  /** Account-and-address pairs that proved the password: exempt from the account-wide limit. */
  private readonly knownPairs = new Map<string, number>()

  /** `now` in seconds since the epoch, fractions kept. */
  constructor(private readonly now: () => number) {}

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
    const pair = pairKey(account, address)
    const blocked = [
      this.live(this.pairs, pair, now, MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS),
      this.live(this.addresses, address, now, MAX_FAILURES_PER_ADDRESS),
    ]
    // The account-wide limit refuses only an address that already failed here and never signed in here.
    if (!this.isKnown(pair, now) && this.live(this.pairs, pair, now, 1))
      blocked.push(this.live(this.accounts, account, now, MAX_FAILURES_PER_ACCOUNT))
    const windows = blocked.filter((w): w is Window => w !== undefined)
    if (windows.length === 0) return
    const retryAfter = Math.max(1, Math.ceil(Math.max(...windows.map((w) => w.resetsAt)) - now))
    throw new AppError('tooManyRequests', Messages.tooManyAttempts, [], { 'retry-after': String(retryAfter) })
  }

  private isKnown(pair: string, now: number): boolean {
    const until = this.knownPairs.get(pair)
    if (until === undefined) return false
    if (until > now) return true
    this.knownPairs.delete(pair)
    return false
  }

  private recordFailure(account: string, address: string): void {
    const now = this.now()
    this.bump(this.accounts, account, now)
    this.bump(this.pairs, pairKey(account, address), now)
    this.bump(this.addresses, address, now)
  }

  /**
   * A correct password clears the account's counts and makes the address known to the account;
   * the address gets back the slot the attempt took.
   */
  recordSuccess(account: string, address: string): void {
    const now = this.now()
    this.accounts.delete(account)
    const pair = pairKey(account, address)
    this.pairs.delete(pair)
    if (this.knownPairs.size >= SWEEP_THRESHOLD) for (const [k, until] of this.knownPairs) if (until <= now) this.knownPairs.delete(k)
    this.knownPairs.set(pair, now + KNOWN_ADDRESS_SECONDS)
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

const SIGN_IN_LIMITER = runtimeSlot('sign-in limiter', (deps) => new SignInLimiter(() => deps.clock.now() / 1000))

/** The limiter of one app instance (tests build many apps in one process). */
const signInLimiter = (deps: Deps): SignInLimiter => deps.runtimes.of(SIGN_IN_LIMITER)

/**
 * Checks a password attempt under the limiter: takes its slot (tooManyRequests when locked out),
 * verifies in the hashing line within the address's, the account's and (for unknown users) the
 * anonymous share (unavailable when a share is full), and gives the slot back when the password
 * is right. An unknown user (`user` undefined) costs a decoy hash and is false.
 */
export async function checkPasswordAttempt(
  deps: Deps,
  user: { id: number; passwordHash: string } | undefined,
  login: string,
  password: string,
  address: string,
): Promise<boolean> {
  const limiter = signInLimiter(deps)
  const account = accountKey(user, login)
  limiter.takeSlot(account, address)
  const shares: QueueShare[] = [{ key: account, cap: HASH_LINE_SHARE_PER_ACCOUNT }]
  // No address: an in-process call, not a network client.
  if (address !== '') shares.push({ key: `address:${address}`, cap: HASH_LINE_SHARE_PER_ADDRESS })
  if (!user) shares.push({ key: 'unknown-users', cap: HASH_LINE_SHARE_OF_UNKNOWN_USERS })
  const ok = await verifyPassword(password, user?.passwordHash ?? '', shares)
  if (ok) limiter.recordSuccess(account, address)
  return ok
}
