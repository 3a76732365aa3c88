import { actingAs, makeTestApp, type TestApp, testRequest } from '../support/app'

/**
 * `makeTestApp`, but every request goes over a real socket to the app listening on a random
 * loopback port (the identity acceptance criteria ask for HTTP, not `app.handle`). Redirects are
 * not followed, so tests see 302s as clients do.
 */
export async function makeHttpTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await makeTestApp(env)
  const base = await t.listen()
  t.request = (method, path, opts) => fetch(testRequest(base, method, path, opts))
  t.as = actingAs(t.request)
  return t
}
