import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { isStreaming, safeSegments } from './relay'
import * as proxy from './service'
import { proxyRequest } from './spec'

const TAGS = ['cluster proxy']

/** The path after `prefix` in the request as sent (still percent-encoded): what the router decoded is not what is forwarded. */
const rawPathAfter = (request: Request, marker: string) => {
  const path = new URL(request.url).pathname
  return path.slice(path.indexOf(marker) + marker.length)
}

/** The member-cluster proxy: the native passthrough for kubectl and the spec's proxy routes. */
export const proxyRoutes = (deps: Deps) =>
  new Elysia({ name: 'clusters.proxy', prefix: '/api/v1' })
    .use(guard(deps))
    .all('/clusters/:owner/:cluster/k8s/*', ({ me, params, request, body, server }) => {
      const rawPath = rawPathAfter(request, `/clusters/${params.owner}/${params.cluster}/k8s`)
      if (server && request.headers.get('upgrade')?.toLowerCase() === 'websocket') return proxy.relayExec(deps, me, params.owner, params.cluster, rawPath, request, server)
      // A watch or a followed log may sit idle far longer than the server's idle timeout.
      if (isStreaming(request.method, safeSegments(rawPath), new URL(request.url).searchParams)) server?.timeout(request, 0)
      return proxy.passThrough(deps, me, params.owner, params.cluster, rawPath, request, body)
    }, {
      signedIn: 'signed-in',
      scope: 'cluster',
      response: { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
      detail: {
        summary: 'Native Kubernetes passthrough: point kubectl, Helm or client-node at …/k8s (the registry\'s kubeconfig route does); the member\'s answers come back unchanged',
        tags: TAGS,
      },
    })
    .all('/clusters/:owner/:cluster/proxy/*', ({ me, params, request, body, server }) => {
      const rawPath = rawPathAfter(request, `/clusters/${params.owner}/${params.cluster}/proxy/`)
      if (isStreaming(request.method, safeSegments(rawPath), new URL(request.url).searchParams)) server?.timeout(request, 0)
      return proxyRequest(deps, me, params.owner, params.cluster, rawPath, request, body, server)
    }, {
      signedIn: 'signed-in',
      scope: 'cluster',
      response: { 304: t.Void({ description: 'If-None-Match matched the ETag' }), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
      detail: {
        summary: 'The spec\'s proxy routes: {group}/{version}/[namespaces/{namespace}/]{resource}[/{name}[/status|scale|events|controller|horizontalpodautoscalers|log|exec|metrics]], authorization.k8s.io/v1/selfsubjectaccessreviews, batch-delete; GETs carry an ETag',
        tags: TAGS,
      },
    })
