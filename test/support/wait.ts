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

/** Reads `reader` (a child's output) until what was read so far, after `seen`, matches `pattern`; returns all of it. */
export async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, pattern: RegExp, seen = ''): Promise<string> {
  let text = seen
  while (!pattern.test(text)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the output ended before ${pattern}: ${text}`)
    text += new TextDecoder().decode(value)
  }
  return text
}
