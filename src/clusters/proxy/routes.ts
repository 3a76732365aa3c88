import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { Actor } from '../../authz/actor'
import type { Deps } from '../../deps'
import { finalResponse } from '../../http/final-response'
import { guard } from '../../http/guard'
import { leanRoute } from '../../http/lean-route'
import { pathOf } from '../../http/routable-url'
import { ErrorBody } from '../../http/schemas'
import { isStreaming, safeSegments } from './relay'
import { PASSTHROUGH_OPERATIONS, PROXY_OPERATIONS } from './schemas'
import * as proxy from './service'
import { proxyRequest } from './spec'

const TAGS = ['cluster proxy']
const CLUSTERS_PREFIX = '/api/v1/clusters/'

/** A path under `/api/v1/clusters/{owner}/{cluster}/{kind}`: the names decoded, the rest as sent (from its `/`). */
interface ClusterPath {
  owner: string
  cluster: string
  kind: string
  /** Still percent-encoded: what a router decoded is not what is forwarded (safeSegments checks it). */
  rest: string
}

/** Splits `path` (as sent) into a ClusterPath; undefined when it is not one or a name will not decode. */
function clusterPath(path: string): ClusterPath | undefined {
  if (!path.startsWith(CLUSTERS_PREFIX)) return undefined
  const ownerEnd = path.indexOf('/', CLUSTERS_PREFIX.length)
  const clusterEnd = ownerEnd < 0 ? -1 : path.indexOf('/', ownerEnd + 1)
  if (clusterEnd < 0) return undefined
  const kindEnd = path.indexOf('/', clusterEnd + 1)
  try {
    return {
      owner: decodeURIComponent(path.slice(CLUSTERS_PREFIX.length, ownerEnd)),
      cluster: decodeURIComponent(path.slice(ownerEnd + 1, clusterEnd)),
      kind: path.slice(clusterEnd + 1, kindEnd < 0 ? undefined : kindEnd),
      rest: kindEnd < 0 ? '' : path.slice(kindEnd),
    }
  } catch {
    return undefined
  }
}

/** What a handler needs of a ClusterPath: whose cluster, and the rest of the path. */
type Target = Pick<ClusterPath, 'owner' | 'cluster' | 'rest'>

/** The request's Target with the names as the app's router decoded them. */
const routedPath = (request: Request, { owner, cluster }: { owner: string; cluster: string }): Target => ({
  owner,
  cluster,
  rest: clusterPath(pathOf(request.url))?.rest ?? '',
})

const isUpgrade = (request: Request) => request.headers.get('upgrade')?.toLowerCase() === 'websocket'

/** The native passthrough's answer to anything but an exec upgrade: the member's, unchanged. */
async function passThroughAnswer(
  deps: Deps,
  me: Actor,
  { owner, cluster, rest }: Target,
  request: Request,
  body: unknown,
  server: Server<unknown> | null,
): Promise<Response> {
  const url = new URL(request.url)
  const segments = safeSegments(rest)
  const streaming = isStreaming(request.method, segments, url.searchParams)
  // A watch or a followed log may sit idle far longer than the server's idle timeout.
  if (streaming) server?.timeout(request, 0)
  return proxy.passThrough(deps, me, owner, cluster, { segments, url, streaming }, request, body)
}

/** The spec's proxy routes' answer; undefined once an exec upgrade took the connection. */
async function specAnswer(
  deps: Deps,
  me: Actor,
  { owner, cluster, rest }: Target,
  request: Request,
  body: unknown,
  server: Server<unknown> | null,
): Promise<Response | undefined> {
  const url = new URL(request.url)
  if (isStreaming(request.method, safeSegments(rest), url.searchParams)) server?.timeout(request, 0)
  return proxyRequest(deps, me, owner, cluster, rest, request, body, server)
}

/**
 * Reads (GET and HEAD without a body: kubectl get, logs, watches, discovery; the spec's views)
 * answered outside Elysia's lifecycle, through the same checks (http/lean-route.ts). The app's
 * routes below answer the rest (writes, exec upgrades) with the same handlers.
 */
const proxyReads = (deps: Deps) =>
  leanRoute(deps, {
    name: 'clusters.proxy.reads',
    match: (request, path) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || request.body !== null || isUpgrade(request)) return undefined
      const target = clusterPath(path)
      return (target?.kind === 'k8s' || target?.kind === 'proxy') && target.rest.startsWith('/') ? target : undefined
    },
    route: (target) => `/api/v1/clusters/:owner/:cluster/${target.kind}/*`,
    signedIn: 'signed-in',
    scope: 'cluster',
    handle: (me, target, request, server) =>
      (target.kind === 'k8s' ? passThroughAnswer : specAnswer)(deps, me, target, request, undefined, server),
  })

/** The member-cluster proxy: the native passthrough for kubectl and the spec's proxy routes. */
export const proxyRoutes = (deps: Deps) =>
  new Elysia({ name: 'clusters.proxy', prefix: '/api/v1' })
    .use(guard(deps))
    .use(proxyReads(deps))
    .all(
      '/clusters/:owner/:cluster/k8s/*',
      async ({ me, params, request, body, server, set }) => {
        const target = routedPath(request, params)
        if (server && isUpgrade(request)) return proxy.relayExec(deps, me, target.owner, target.cluster, target.rest, request, server)
        return finalResponse(set, await passThroughAnswer(deps, me, target, request, body, server))
      },
      {
        signedIn: 'signed-in',
        scope: 'cluster',
        response: { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
        detail: {
          summary: "Native Kubernetes passthrough: the member's answers come back unchanged",
          tags: TAGS,
          'x-operations': PASSTHROUGH_OPERATIONS,
        },
      },
    )
    .all(
      '/clusters/:owner/:cluster/proxy/*',
      async ({ me, params, request, body, server, set }) => {
        const answer = await specAnswer(deps, me, routedPath(request, params), request, body, server)
        return answer && finalResponse(set, answer)
      },
      {
        signedIn: 'signed-in',
        scope: 'cluster',
        response: {
          401: ErrorBody,
          403: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
          502: ErrorBody,
        },
        detail: {
          summary: "The spec's proxy routes, one wildcard documented as each of them",
          tags: TAGS,
          'x-operations': PROXY_OPERATIONS,
        },
      },
    )
