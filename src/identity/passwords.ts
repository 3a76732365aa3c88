import { AppError } from '../errors'

/**
 * OWASP's argon2id floor (19 MiB, 2 passes) rather than Bun's 64 MiB default: every password
 * check costs memory and CPU, and a 2-core box must survive a flood of them.
 */
const ARGON2 = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const
const MAX_CONCURRENT_HASHES = 2
const MAX_WAITING_HASHES = 64
/** A hash of a random password: verifying against it costs the same as against a real one. */
let decoyHash: Promise<string> | undefined

/** A claimant's part of the waiting line: at most `cap` waiting checks under one `key`. */
export interface QueueShare {
  key: string
  cap: number
}

let running = 0
const waiting: (() => void)[] = []
const waitingPerShare = new Map<string, number>()

const unavailable = () => new AppError('unavailable', 'too many password checks in progress, retry shortly', [], { 'retry-after': '1' })

function addToShares(shares: readonly QueueShare[], delta: number): void {
  for (const { key } of shares) {
    const count = (waitingPerShare.get(key) ?? 0) + delta
    if (count > 0) waitingPerShare.set(key, count)
    else waitingPerShare.delete(key)
  }
}

/**
 * Runs `work` when a hashing slot is free. Waiting is bounded in all (64) and per share, so one
 * flood (one address, unknown users) cannot take the whole line from everyone else; past a bound
 * → unavailable (503, Retry-After).
 */
async function withHashSlot<T>(work: () => Promise<T>, shares: readonly QueueShare[] = []): Promise<T> {
  if (running >= MAX_CONCURRENT_HASHES) {
    if (waiting.length >= MAX_WAITING_HASHES || shares.some(({ key, cap }) => (waitingPerShare.get(key) ?? 0) >= cap)) throw unavailable()
    addToShares(shares, 1)
    try {
      await new Promise<void>((wake) => waiting.push(wake))
    } finally {
      addToShares(shares, -1)
    }
  }
  running++
  try {
    return await work()
  } finally {
    running--
    waiting.shift()?.()
  }
}

export function hashPassword(password: string): Promise<string> {
  return withHashSlot(() => Bun.password.hash(password, ARGON2))
}

/**
 * Checks `password` against `hash`, waiting in line under `shares`. An empty hash (no password
 * set, unknown user) is checked against a decoy so that the answer takes the same time and is
 * always false.
 */
export async function verifyPassword(password: string, hash: string, shares: readonly QueueShare[] = []): Promise<boolean> {
  if (hash === '') {
    decoyHash ??= Bun.password.hash(crypto.randomUUID(), ARGON2)
    const decoy = await decoyHash
    await withHashSlot(() => Bun.password.verify(password, decoy), shares)
    return false
  }
  return withHashSlot(() => Bun.password.verify(password, hash), shares)
}
