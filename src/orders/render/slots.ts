import { AppError } from '../../errors'

/**
 * Slots for work that many callers share (Helm processes): a caller runs at most `perCaller` at
 * once and may keep at most `waitingPerCaller` more in line, so one caller's endless renders can
 * neither hold every slot nor fill the line; past a bound → unavailable (503, Retry-After). A free
 * slot goes to the longest-waiting caller that is under its share.
 */

export interface SlotShares {
  total: number
  perCaller: number
  waitingTotal: number
  waitingPerCaller: number
}

const Messages = { busy: 'too many chart renders in progress, retry shortly' } as const

export class FairSlots {
  private inUse = 0
  private readonly runningBy = new Map<string, number>()
  private readonly line: { caller: string; start: () => void }[] = []

  constructor(private readonly shares: SlotShares) {}

  /** Waits for a slot for `caller` and answers its release; throws unavailable when the line, or the caller's part of it, is full. */
  async acquire(caller: string): Promise<() => void> {
    if (this.mayStart(caller)) this.take(caller)
    else {
      const waiting = this.line.filter((w) => w.caller === caller).length
      if (this.line.length >= this.shares.waitingTotal || waiting >= this.shares.waitingPerCaller)
        throw new AppError('unavailable', Messages.busy, [], { 'retry-after': '1' })
      // The slot is taken on the waiter's behalf before it is woken (next()), so no one overtakes it.
      await new Promise<void>((start) => this.line.push({ caller, start }))
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.give(caller)
    }
  }

  private mayStart(caller: string): boolean {
    return this.inUse < this.shares.total && (this.runningBy.get(caller) ?? 0) < this.shares.perCaller
  }

  private take(caller: string): void {
    this.inUse++
    this.runningBy.set(caller, (this.runningBy.get(caller) ?? 0) + 1)
  }

  private give(caller: string): void {
    this.inUse--
    const left = (this.runningBy.get(caller) ?? 1) - 1
    if (left > 0) this.runningBy.set(caller, left)
    else this.runningBy.delete(caller)
    const next = this.line.findIndex((w) => this.mayStart(w.caller))
    if (next === -1) return
    const [waiter] = this.line.splice(next, 1)
    this.take(waiter!.caller)
    waiter!.start()
  }
}
