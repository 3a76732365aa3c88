import { hostname } from 'node:os'
import { type Deps, runtimeSlot } from '../deps'
import { messageOf } from '../errors'
import * as store from './store'

/**
 * Work that exactly one process of all those sharing the database must do (docs/decisions.md §9): periodic
 * jobs (sweeps, pruning) and long-running services (the sandbox emulator). The choice is a lease row
 * in the database, the one truth every process already shares: no process talks to another, and a
 * process that dies simply stops renewing, so its lease runs out and another takes it over.
 */

/** How long a service's lease lasts unrenewed: another process takes over at most this long (plus one renewal) after its holder died. */
export const LEASE_MS = 10_000
/** How often a service's holder renews its lease, and how often the others ask for it. */
export const RENEW_EVERY_MS = 2_000
/** A periodic job is checked at least this often, so it runs near its due time after the process that ran it last has died. */
const CHECK_EVERY_MS = 60_000

type Stop = () => Promise<void>

interface Registry {
  /** This app's name in lease rows: host, process and a random part (tests run several apps in one process). */
  holder: string
  stops: Set<Stop>
}

const SINGLETONS = runtimeSlot(
  'singletons',
  (): Registry => ({
    holder: `${hostname()}:${process.pid}:${Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString('hex')}`,
    stops: new Set(),
  }),
  async (registry) => {
    for (const stop of [...registry.stops]) await stop()
  },
)

export interface SingletonJob {
  /** Runs the job when its period is due and no other process took it: true when this process ran it. */
  runIfDue(): Promise<boolean>
  stop: Stop
}

/**
 * Runs `job` about every `everyMs` on one process of all sharing the database: each period's run
 * goes to the first process that claims it (a lease lasting one period), so a period is never run
 * twice, and when the last runner died the next check elsewhere runs it. Checks come at least
 * every minute (the first one interval after the call); a failing run is logged and the next
 * period tries again. Stopped with the app (closeDeps).
 */
export function runAsSingleton(deps: Deps, name: string, everyMs: number, job: () => Promise<void>): SingletonJob {
  const registry = deps.runtimes.of(SINGLETONS)
  const check = async () => {
    const nowMs = deps.clock.now()
    const lease = { name, holder: registry.holder, nowMs, untilMs: nowMs + everyMs, takeFrom: [] }
    if (!(await deps.db.write((tx) => store.claimLease(tx, lease)))) return false
    await job()
    return true
  }
  const ticker = repeat(Math.min(everyMs, CHECK_EVERY_MS), async () => {
    try {
      return await check()
    } catch (error) {
      deps.log.error('singleton job failed', { singleton: name, reason: messageOf(error) })
      return false
    }
  })
  return { runIfDue: ticker.run, stop: registered(registry, ticker.stop) }
}

export interface SingletonService {
  /** Takes or renews the lease and starts or stops the service to match: true while this process runs it. */
  check(): Promise<boolean>
  stop: Stop
}

/**
 * Keeps the service `start` starts running on one process of all sharing the database: its holder
 * renews a LEASE_MS lease every RENEW_EVERY_MS; the others ask as often and start it once the lease
 * has run out (its holder died or hung; at once when the holder was a process of this host that
 * is gone). The first check comes one interval after the call, or when the caller asks (`check`). A holder that finds its lease taken, or cannot renew it
 * before it runs out, stops the service. Stopping (with the app) stops the service and gives the
 * lease up, so another process takes over at its next check.
 */
export function holdAsSingleton(deps: Deps, name: string, start: () => Promise<Stop>): SingletonService {
  const registry = deps.runtimes.of(SINGLETONS)
  let running: Stop | undefined
  let heldUntilMs = 0
  const stopService = async () => {
    const stop = running
    running = undefined
    if (!stop) return
    await stop().catch((error: unknown) => deps.log.error('singleton stop failed', { singleton: name, reason: messageOf(error) }))
    deps.log.info('singleton stopped', { singleton: name, holder: registry.holder })
  }
  const ticker = repeat(RENEW_EVERY_MS, async () => {
    const nowMs = deps.clock.now()
    const lease = { name, holder: registry.holder, nowMs, untilMs: nowMs + LEASE_MS, takeFrom: [registry.holder] }
    let held: boolean
    try {
      held = await deps.db.write(async (tx) => {
        if (await store.claimLease(tx, lease)) return true
        // A holder on this machine whose process is gone (killed, crashed) need not be waited out.
        const other = await store.findLeaseHolder(tx, name, nowMs)
        return other !== undefined && diedOnThisHost(other) && store.claimLease(tx, { ...lease, takeFrom: [registry.holder, other] })
      })
      if (held) heldUntilMs = lease.untilMs
    } catch (error) {
      // The database is out of reach: keep the service while the lease surely still is ours.
      deps.log.error('singleton lease not renewed', { singleton: name, reason: messageOf(error) })
      held = nowMs < heldUntilMs
    }
    if (!held) {
      await stopService()
      return false
    }
    if (!running) {
      try {
        running = await start()
        deps.log.info('singleton started', { singleton: name, holder: registry.holder })
      } catch (error) {
        deps.log.error('singleton start failed', { singleton: name, reason: messageOf(error) })
        await deps.db.write((tx) => store.releaseLease(tx, name, registry.holder)).catch(() => undefined)
        return false
      }
    }
    return true
  })
  const stop = registered(registry, async () => {
    await ticker.stop()
    await stopService()
    await deps.db.write((tx) => store.releaseLease(tx, name, registry.holder)).catch(() => undefined)
  })
  return { check: ticker.run, stop }
}

/**
 * Runs `step` every `everyMs` and when `run` is called, never two at once (a call during a run
 * joins it); the timer keeps no process alive. The first timed run comes after one interval, so
 * processes started together do not all ask at the same moment.
 */
function repeat(everyMs: number, step: () => Promise<boolean>) {
  let current: Promise<boolean> | undefined
  let stopped = false
  const run = (): Promise<boolean> => {
    if (stopped) return Promise.resolve(false)
    current ??= step().finally(() => {
      current = undefined
    })
    return current
  }
  const timer = setInterval(() => void run(), everyMs)
  timer.unref()
  return {
    run,
    stop: async () => {
      stopped = true
      clearInterval(timer)
      await current
    },
  }
}

/** `stop` as one of the app's singletons (closed by closeDeps), removed from them once called. */
function registered(registry: Registry, stop: Stop): Stop {
  const once: Stop = async () => {
    registry.stops.delete(once)
    await stop()
  }
  registry.stops.add(once)
  return once
}

/**
 * True when `holder` names a process of this host that no longer exists. Hosts must have distinct
 * names (docs/operations.md); a reused process id only makes a dead holder look alive, so its
 * lease is waited out.
 */
function diedOnThisHost(holder: string): boolean {
  const [host, pid] = holder.split(':')
  if (host !== hostname() || !/^\d+$/.test(pid ?? '') || Number(pid) === process.pid) return false
  try {
    process.kill(Number(pid), 0)
    return false
  } catch (error) {
    return (error as { code?: string }).code === 'ESRCH'
  }
}
