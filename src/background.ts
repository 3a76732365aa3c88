import { pruneAuditEventsPeriodically } from './audit/service'
import { startSandbox } from './clusters/sandbox'
import type { Deps } from './deps'
import { sweepLimiter } from './identity/limiter/service'
import { sweepTickets } from './identity/signin/tickets'
import { startMsgbus } from './msgbus/bus'
import { holdAsSingleton, runAsSingleton } from './singletons/service'

/** How often expired sign-in state (limiter windows, checks never settled, known addresses, tickets) is deleted. */
const SIGN_IN_SWEEP_EVERY_MS = 10 * 60_000

/**
 * What a serving process runs beside its requests (docs/operations.md, "Several processes and
 * machines"). Every process keeps its own message-bus link (its usage subscribers share the
 * messages through a queue group); work that must happen once runs as a singleton (src/singletons):
 * the sandbox emulator on one process, periodic jobs on whichever process claims each period.
 * Resolves once this process knows whether it holds the singleton services (the sandbox is up
 * before the server says it listens); returns the function that stops it all.
 */
export async function startBackgroundWork(deps: Deps): Promise<() => Promise<void>> {
  const stops: (() => Promise<void>)[] = [startMsgbus(deps)]
  stops.push(
    runAsSingleton(deps, 'sign-in-sweep', SIGN_IN_SWEEP_EVERY_MS, async () => {
      await sweepLimiter(deps)
      await sweepTickets(deps)
    }).stop,
  )
  stops.push(pruneAuditEventsPeriodically(deps).stop)
  if (deps.config.sandboxCluster) {
    const sandbox = holdAsSingleton(deps, 'sandbox-cluster', async () => {
      const emulator = await startSandbox(deps)
      return () => emulator.stop()
    })
    stops.push(sandbox.stop)
    await sandbox.check()
  }
  return async () => {
    for (const stop of stops.reverse()) await stop()
  }
}
