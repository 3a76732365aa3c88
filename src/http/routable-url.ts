import { Elysia } from 'elysia'

/** Where the path begins in `scheme://host/path`; -1 when the URL has no path. */
const pathStart = (url: string) => url.indexOf('/', url.indexOf('//') + 2)

/** The path of `scheme://host/path?query` as sent (still percent-encoded), without parsing a URL. */
export function pathOf(url: string): string {
  const start = pathStart(url)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/**
 * Elysia finds a request's path as the first '/' from character 11 on, assuming a host of at
 * least four characters. With `Host: a` (or a three-letter intranet name on the default port)
 * that skips the path's own first segment: `http://a/zzz/api/v1/user` routes as `/api/v1/user`
 * while auth and the log see `/zzz/...`. Naming the default port (`http://a:80/...`) names the
 * same origin and puts the path where Elysia looks; the Request object itself is kept, as the
 * server needs it for the client address and WebSocket upgrades.
 */
function makeRoutable(request: Request): void {
  const url = request.url
  const start = pathStart(url)
  if (start >= 11 || start < 0) return
  const port = url.startsWith('https:') ? ':443' : ':80'
  Object.defineProperty(request, 'url', { value: url.slice(0, start) + port + url.slice(start) })
}

/** Applies `makeRoutable` before Elysia routes: a higher-order function is the one hook that runs before the path is read. */
export const routableUrl = new Elysia({ name: 'routable-url' }).wrap((handle, request) => {
  makeRoutable(request)
  return handle
})
