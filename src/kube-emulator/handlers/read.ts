/** get, list and watch of a stored resource, as JSON or as a Table. */
import type { KubeObject } from '../../kube'
import type { Call } from '../context'
import { toTable } from '../table'
import { watchStream } from '../watch'
import { apiVersionOf, checkListVersion, includeObject, JSON_HEADERS, json, listOptions, present, queryFlag, wantsTable } from './request'

export function get({ ctx, req, url, info, r }: Call): Response {
  const obj = present(r, info.version, ctx.registry.get(r, info.namespace, info.name))
  return json(wantsTable(req) ? toTable(r, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(url.searchParams)) : obj)
}

export function list({ ctx, req, url, info, r }: Call): Response {
  const q = url.searchParams
  checkListVersion(q)
  const res = ctx.registry.list(r, info.namespace, listOptions(q, r))
  const items = res.items.map((o) => present(r, info.version, o))
  const metadata = {
    resourceVersion: res.resourceVersion,
    ...(res.continueToken ? { continue: res.continueToken } : {}),
    ...(res.remainingItemCount !== undefined ? { remainingItemCount: res.remainingItemCount } : {}),
  }
  if (wantsTable(req)) return json(toTable(r, items, metadata, includeObject(q)))
  // Items of built-in lists carry no apiVersion and kind; custom resources' do, as unstructured objects.
  return json({
    kind: `${r.strategy.kind}List`,
    apiVersion: apiVersionOf(r, info.version),
    metadata,
    items: r.strategy.custom ? items : res.items,
  })
}

export function watch({ ctx, req, url, info, r, server }: Call): Response {
  server.timeout(req, 0)
  const q = url.searchParams
  const out = (obj: KubeObject) => present(r, info.version, obj)
  const mode = includeObject(q)
  const render = wantsTable(req)
    ? (obj: KubeObject) => toTable(r, [out(obj)], { resourceVersion: obj.metadata.resourceVersion }, mode)
    : out
  const timeout = q.get('timeoutSeconds')
  const body = watchStream(ctx.registry, r, {
    ...listOptions(q, r),
    limit: undefined,
    continueToken: undefined,
    namespace: info.namespace,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    allowBookmarks: queryFlag(q, 'allowWatchBookmarks'),
    sendInitialEvents: queryFlag(q, 'sendInitialEvents'),
    timeoutSeconds: timeout ? Number(timeout) : undefined,
    bookmarkIntervalMs: ctx.bookmarkIntervalMs,
    tooLargeResourceVersionWaitMs: ctx.tooLargeResourceVersionWaitMs,
    present: render,
    apiVersion: apiVersionOf(r, info.version),
  })
  return new Response(body, { headers: { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' } })
}
