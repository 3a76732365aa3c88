import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { finalResponse } from '../../http/final-response'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { isStreaming, safeSegments } from './relay'
import * as proxy from './service'
import { proxyRequest } from './spec'

const TAGS = ['cluster proxy']

/** The path after `prefix` in the request as sent (still percent-encoded): what the router decoded is not what is forwarded. */
const rawPathAfter = (url: URL, marker: string) => url.pathname.slice(url.pathname.indexOf(marker) + marker.length)

/** The member-cluster proxy: the native passthrough for kubectl and the spec's proxy routes. */
export const proxyRoutes = (deps: Deps) =>
  new Elysia({ name: 'clusters.proxy', prefix: '/api/v1' })
    .use(guard(deps))
    .all('/clusters/:owner/:cluster/k8s/*', async ({ me, params, request, body, server, set }) => {
      const url = new URL(request.url)
      const rawPath = rawPathAfter(url, `/clusters/${params.owner}/${params.cluster}/k8s`)
      if (server && request.headers.get('upgrade')?.toLowerCase() === 'websocket') return proxy.relayExec(deps, me, params.owner, params.cluster, rawPath, request, server)
      const segments = safeSegments(rawPath)
      const streaming = isStreaming(request.method, segments, url.searchParams)
      // A watch or a followed log may sit idle far longer than the server's idle timeout.
      if (streaming) server?.timeout(request, 0)
      return finalResponse(set, await proxy.passThrough(deps, me, params.owner, params.cluster, { segments, url, streaming }, request, body))
    }, {
      signedIn: 'signed-in',
      scope: 'cluster',
      response: { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
      detail: {
        summary: 'Native Kubernetes passthrough: point kubectl, Helm or client-node at …/k8s (the registry\'s kubeconfig route does); the member\'s answers come back unchanged',
        tags: TAGS,
      },
    })
    .all('/clusters/:owner/:cluster/proxy/*', async ({ me, params, request, body, server, set }) => {
      const url = new URL(request.url)
      const rawPath = rawPathAfter(url, `/clusters/${params.owner}/${params.cluster}/proxy/`)
      if (isStreaming(request.method, safeSegments(rawPath), url.searchParams)) server?.timeout(request, 0)
      const answer = await proxyRequest(deps, me, params.owner, params.cluster, rawPath, request, body, server)
      return answer && finalResponse(set, answer)
    }, {
      signedIn: 'signed-in',
      scope: 'cluster',
      response: { 304: t.Void({ description: 'If-None-Match matched the ETag' }), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
      detail: {
        summary: 'The spec\'s proxy routes: {group}/{version}/[namespaces/{namespace}/]{resource}[/{name}[/status|scale|events|controller|horizontalpodautoscalers|log|exec|metrics]], authorization.k8s.io/v1/selfsubjectaccessreviews, batch-delete; GETs carry an ETag',
        tags: TAGS,
      },
    })
