import { type Deps, runtimeSlot } from '../../deps'
import { AppError } from '../../errors'
import type { Executor } from '../../storage/database'
import { type QueueShare, verifyPassword } from '../passwords'
import * as store from './store'

/**
 * Failed password attempts allowed within one window: for one account from one client address,
 * for one account from everywhere, and for one client address over all accounts. The per-pair
 * limit stops a guesser early. The account limit only slows guessing spread over many addresses:
 * past it, an address that has already failed on the account is refused, but one that has not
 * (or that signed in to the account before) may always try, so nobody without the password can
 * lock the owner out. The counts live in the database: every process sees them, restarts keep them.
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
/** A check whose process died without a verdict stops holding its place after this long. */
const CHECK_IN_FLIGHT_MS = 30_000
/** How long an attempt waits for the verdicts of checks in flight before it is answered 503. */
const MAX_WAIT_FOR_VERDICTS_MS = 10_000
/** How often a waiting attempt looks for verdicts given by other processes (this process's wake it at once). */
const VERDICT_POLL_MS = 25

export const Messages = {
  tooManyAttempts: 'too many failed sign-in attempts, retry later',
  busy: 'too many password checks in progress for this account, retry shortly',
} as const

/**
 * The key an account's failures are counted under: the user id when the login names a user (so
 * name, email and Basic attempts share one count), else the lower-cased login as typed.
 */
function accountKey(user: { id: number } | undefined, login: string): string {
  return user ? `user:${user.id}` : `login:${login.trim().toLowerCase()}`
}

/** What the limiter says to an attempt: go (hash it), wait for verdicts in flight, or refuse until `retryAfterSeconds`. */
type Assessment = { go: true } | { wait: true } | { retryAfterSeconds: number }

/** The counts an assessment reads, for one account from one address. */
interface LimiterState {
  failures: Partial<Record<store.WindowKind, store.FailureWindow>>
  inFlight: Record<store.WindowKind, number>
  known: boolean
}

/**
 * Refuses when real failures reached a limit (the pair's, the address's, or the account's for an
 * address that has failed on it and never signed in from it); waits when failures and checks in
 * flight together reach one, since those checks may yet fail; else lets the attempt go. So an
 * attempt in flight never refuses another, and no more attempts than the limit are ever hashed.
 */
function assess(state: LimiterState, nowMs: number): Assessment {
  const limits: [store.WindowKind, number][] = [
    ['pair', MAX_FAILURES_PER_ACCOUNT_FROM_ADDRESS],
    ['address', MAX_FAILURES_PER_ADDRESS],
  ]
  if (!state.known && (state.failures.pair?.failures ?? 0) >= 1) limits.push(['account', MAX_FAILURES_PER_ACCOUNT])
  const locked = limits.flatMap(([kind, max]) => {
    const window = state.failures[kind]
    return window && window.failures >= max ? [window.resetsAtMs] : []
  })
  if (locked.length > 0) return { retryAfterSeconds: Math.max(1, Math.ceil((Math.max(...locked) - nowMs) / 1000)) }
  if (limits.some(([kind, max]) => (state.failures[kind]?.failures ?? 0) + state.inFlight[kind] >= max)) return { wait: true }
  return { go: true }
}

async function loadState(db: Executor, account: string, address: string, nowMs: number): Promise<LimiterState> {
  const [failures, inFlight, known] = await Promise.all([
    store.findLiveWindows(db, account, address, nowMs),
    store.countInFlight(db, account, address, nowMs),
    store.isKnownAddress(db, account, address, nowMs),
  ])
  return { failures, inFlight, known }
}

/** Wakes this process's waiting attempts when one of its checks has its verdict. */
const VERDICTS = runtimeSlot('sign-in verdicts', () => new Set<() => void>())

function nextVerdict(deps: Deps): Promise<void> {
  const waiting = deps.runtimes.of(VERDICTS)
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer)
      waiting.delete(wake)
      resolve()
    }
    const timer = setTimeout(wake, VERDICT_POLL_MS)
    waiting.add(wake)
  })
}

function verdictGiven(deps: Deps): void {
  for (const wake of [...deps.runtimes.of(VERDICTS)]) wake()
}

const tooMany = (retryAfterSeconds: number) =>
  new AppError('tooManyRequests', Messages.tooManyAttempts, [], { 'retry-after': String(retryAfterSeconds) })

/**
 * Takes a place for a check of `account` from `address`: refused at once (tooManyRequests, 429 with
 * Retry-After) when real failures locked it out, else waits for the verdicts of checks in flight
 * while they could still reach a limit (unavailable, 503, after MAX_WAIT_FOR_VERDICTS_MS). The
 * verdict is looked for with a read first, so a locked-out flood costs no write.
 */
async function takePlace(deps: Deps, account: string, address: string): Promise<number> {
  const deadline = performance.now() + MAX_WAIT_FOR_VERDICTS_MS
  for (;;) {
    const nowMs = deps.clock.now()
    let assessment = assess(await loadState(deps.db.read, account, address, nowMs), nowMs)
    if ('go' in assessment) {
      const taken = await deps.db.write(async (tx) => {
        const again = assess(await loadState(tx, account, address, nowMs), nowMs)
        return 'go' in again ? store.insertAttempt(tx, account, address, nowMs + CHECK_IN_FLIGHT_MS) : again
      })
      if (typeof taken === 'number') return taken
      assessment = taken
    }
    if ('retryAfterSeconds' in assessment) throw tooMany(assessment.retryAfterSeconds)
    if (performance.now() > deadline) throw new AppError('unavailable', Messages.busy, [], { 'retry-after': '1' })
    await nextVerdict(deps)
  }
}

/** Records a check's verdict: a failure counts in all three windows; a right password clears the account's counts and makes the address known. */
async function recordVerdict(deps: Deps, attempt: number, account: string, address: string, ok: boolean): Promise<void> {
  const nowMs = deps.clock.now()
  await deps.db.write(async (tx) => {
    await store.deleteAttempt(tx, attempt)
    if (ok) {
      await store.clearAccountFailures(tx, account, address)
      await store.rememberAddress(tx, account, address, nowMs + KNOWN_ADDRESS_SECONDS * 1000)
    } else
      for (const kind of ['account', 'pair', 'address'] as const)
        await store.addFailure(tx, kind, account, address, nowMs, FAILURE_WINDOW_SECONDS * 1000)
  })
}

/**
 * Checks a password attempt under the limiter: takes its place (tooManyRequests when locked out,
 * waiting while checks in flight may still lock it), verifies in the hashing line within the
 * address's, the account's and (for unknown users) the anonymous share (unavailable when a share
 * is full, which gives the place back uncounted), and records the verdict. An unknown user
 * (`user` undefined) costs a decoy hash and is false.
 */
export async function checkPasswordAttempt(
  deps: Deps,
  user: { id: number; passwordHash: string } | undefined,
  login: string,
  password: string,
  address: string,
): Promise<boolean> {
  const account = accountKey(user, login)
  const attempt = await takePlace(deps, account, address)
  const shares: QueueShare[] = [{ key: account, cap: HASH_LINE_SHARE_PER_ACCOUNT }]
  // No address: an in-process call, not a network client.
  if (address !== '') shares.push({ key: `address:${address}`, cap: HASH_LINE_SHARE_PER_ADDRESS })
  if (!user) shares.push({ key: 'unknown-users', cap: HASH_LINE_SHARE_OF_UNKNOWN_USERS })
  try {
    const ok = await verifyPassword(password, user?.passwordHash ?? '', shares)
    await recordVerdict(deps, attempt, account, address, ok)
    return ok
  } catch (error) {
    await deps.db.write((tx) => store.deleteAttempt(tx, attempt)).catch(() => undefined)
    throw error
  } finally {
    verdictGiven(deps)
  }
}

/** Forgets windows that have reset, checks that never got a verdict and addresses no longer known (a periodic singleton). */
export async function sweepLimiter(deps: Deps): Promise<void> {
  const nowMs = deps.clock.now()
  await deps.db.write((tx) => store.deleteExpired(tx, nowMs))
}
