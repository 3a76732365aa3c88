import type { Clock } from '../../src/clock'

/**
 * The clock test apps run on: the wall clock shifted by what the test moved it, so time still
 * passes between requests, and an expiry is reached by `advance` instead of a sleep.
 */
export class TestClock implements Clock {
  private offsetMs = 0

  now(): number {
    return Date.now() + this.offsetMs
  }

  /** Moves "now" forward by `ms` (backward when negative). */
  advance(ms: number): void {
    this.offsetMs += ms
  }

  /** Moves "now" to `epochMs`; it runs on from there. */
  set(epochMs: number): void {
    this.offsetMs = epochMs - Date.now()
  }

  /** Whole seconds since the epoch, as the stores keep expiries. */
  seconds(): number {
    return Math.floor(this.now() / 1000)
  }
}
