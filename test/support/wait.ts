/**
 * Polls `check` until it returns a truthy value and returns that; throws once `timeoutMs` has
 * passed. For outcomes with no event to await (a controller's reconcile, a count in another
 * process); the deadline only bounds a failure, a passing test never waits it out.
 */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v) return v
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}
