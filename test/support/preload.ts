import { afterAll } from 'bun:test'
import { descendantsOf, killAll } from './children'
import { runEndTasks } from './run-end'

// Servers the tests start (with this environment) serve plain HTTP unless a test asks for the
// default start, HTTPS with a CA of its own (docs/decisions.md §12), by setting PLATFORM_TLS to ''.
process.env.PLATFORM_TLS ??= 'off'

/**
 * Loaded before every test file (bunfig.toml): once every file has run, whatever a test started
 * and did not stop is named and killed (`.ci/run` counts each as a failure), and temporary
 * directories are removed; so a failing or timed-out test leaves nothing running
 * (test/support/children.ts says why helpers' own cleanup is not enough on its own).
 */
afterAll(() => {
  const left = descendantsOf(process.pid)
  if (left.length > 0) {
    console.error(
      `test run: ${left.length} process(es) still running at the end, killed:\n${left.map((p) => `  ${p.pid} ${p.command}`).join('\n')}`,
    )
    killAll(left)
  }
  runEndTasks()
  // Removing every app's data directory of a full run takes tens of seconds on a loaded machine.
}, 600_000)

// Interrupted (Ctrl-C, a CI timeout): the same, then exit as the signal would have.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const)
  process.on(signal, () => {
    killAll(descendantsOf(process.pid))
    process.exit(code)
  })
