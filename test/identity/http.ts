import { makeTestApp, type RequestOptions, type TestApp } from '../support/app'

/**
 * `makeTestApp`, but every request goes over a real socket to the app listening on a random
 * loopback port (the identity acceptance criteria ask for HTTP, not `app.handle`). Redirects are
 * not followed, so tests see 302s as clients do.
 */
export async function makeHttpTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await makeTestApp(env)
  const base = await t.listen()
  const request = (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) }
    if (opts.token) headers.authorization = `token ${opts.token}`
    let body: BodyInit | undefined
    if (opts.body instanceof FormData || typeof opts.body === 'string') body = opts.body
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    return fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' })
  }
  t.request = request
  t.as = (who) => ({
    get: (path, headers) => request('GET', path, { token: who.token, headers }),
    delete: (path, body) => request('DELETE', path, { token: who.token, body }),
    send: (method, path, body, headers) => request(method, path, { token: who.token, body, headers }),
  })
  return t
}
