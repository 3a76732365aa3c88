/** How often pending deadlines are checked. */
const CHECK_MS = 250

/**
 * Deadlines on an injected clock (a test moves it rather than waiting): each pending one is
 * checked every quarter second while any is pending, and runs its `expire` once it has passed.
 * `close` runs every pending one at once (the app is closing: nothing may stay open behind it).
 */
export class Deadlines {
  private readonly pending = new Set<{ at: number; expire: () => void }>()
  private timer: Timer | undefined

  constructor(private readonly now: () => number) {}

  /** Runs `expire` once the clock reaches `at`, unless the returned function cancels it first. */
  add(at: number, expire: () => void): () => void {
    const entry = { at, expire }
    this.pending.add(entry)
    this.timer ??= setInterval(() => this.check(), CHECK_MS)
    this.timer.unref()
    return () => this.remove(entry)
  }

  close(): void {
    for (const entry of [...this.pending]) this.run(entry)
  }

  private check(): void {
    const now = this.now()
    for (const entry of [...this.pending]) if (now >= entry.at) this.run(entry)
  }

  private run(entry: { at: number; expire: () => void }): void {
    this.remove(entry)
    entry.expire()
  }

  private remove(entry: { at: number; expire: () => void }): void {
    this.pending.delete(entry)
    if (this.pending.size > 0 || !this.timer) return
    clearInterval(this.timer)
    this.timer = undefined
  }
}
