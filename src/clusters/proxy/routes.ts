import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { auditKubernetes } from '../../audit/recorder'
import type { Actor } from '../../authz/actor'
import type { ClusterScope } from '../../authz/clusters'
import type { Deps } from '../../deps'
import { finalResponse } from '../../http/final-response'
import { admitInCluster, guard } from '../../http/guard'
import { leanRoute } from '../../http/lean-route'
import { assertServedMethod } from '../../http/methods'
import { pathOf } from '../../http/routable-url'
import { ErrorBody, KubernetesStatus } from '../../http/schemas'
import { asksUpgrade } from '../../http/websocket-upgrade'
import { isStreaming, safeSegments } from './relay'
import { kubernetesCallOf } from './request-info'
import { platformReview } from './reviews'
import { PASSTHROUGH_OPERATIONS, PROXY_OPERATIONS } from './schemas'
import * as proxy from './service'
import { auditCreated } from './session-audit'
import { proxyRequest } from './spec'

const TAGS = ['cluster proxy']
const CLUSTERS_PREFIX = '/api/v1/clusters/'

/** A path under `/api/v1/clusters/{owner}/{cluster}/{kind}`: the names decoded, the rest as sent (from its `/`). */
type ClusterPath = {
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

/** The request's path after `/k8s` or `/proxy` (still percent-encoded), as the app's router matched it. */
const restOf = (request: Request) => clusterPath(pathOf(request.url))?.rest ?? ''

/** The verb of a request to a path family (service.ts proxiedVerb): what its `inCluster` admission asks. */
const verbOf = (request: Request, family: 'k8s' | 'proxy', rest: string) =>
  proxy.proxiedVerb(request.method, family, rest, asksUpgrade(request))

/** The native passthrough's answer: an admitted upgrade relayed, anything else the member's answer, unchanged. */
async function passThroughAnswer(
  deps: Deps,
  me: Actor,
  cluster: ClusterScope,
  rest: string,
  request: Request,
  body: unknown,
  server: Server<unknown> | null,
): Promise<Response | undefined> {
  const review = platformReview(me, cluster, request.method, rest, body)
  if (review) return review
  const url = new URL(request.url)
  const segments = safeSegments(rest)
  const target = await proxy.targetOf(deps, me, cluster, request.signal)
  if (asksUpgrade(request)) return proxy.relayUpgrade(target, segments, request, server)
  const streaming = isStreaming(request.method, segments, url.searchParams)
  // A watch or a followed log may sit idle far longer than the server's idle timeout.
  if (streaming) server?.timeout(request, 0)
  return proxy.passThrough(target, { segments, url, streaming }, request, body)
}

/** The spec's proxy routes' answer; undefined once an upgrade took the connection. */
async function specAnswer(
  deps: Deps,
  me: Actor,
  cluster: ClusterScope,
  rest: string,
  request: Request,
  body: unknown,
  server: Server<unknown> | null,
): Promise<Response | undefined> {
  return proxyRequest(await proxy.targetOf(deps, me, cluster, request.signal), rest, request, body, server)
}

/**
 * Reads (GET and HEAD without a body or an upgrade: kubectl get, logs, watches, discovery; the
 * spec's views) answered outside Elysia's lifecycle, admitted by the same function as the app's
 * routes below (http/lean-route.ts), which answer the rest (writes, upgrades) with the same handlers.
 */
const proxyReads = (deps: Deps) =>
  leanRoute(deps, {
    name: 'clusters.proxy.reads',
    // The path first: every request of the app passes here, and reading a body or a header costs more.
    match: (request, path) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
      const target = clusterPath(path)
      if ((target?.kind !== 'k8s' && target?.kind !== 'proxy') || !target.rest.startsWith('/')) return undefined
      return request.body === null && !asksUpgrade(request) ? target : undefined
    },
    route: (target) => `/api/v1/clusters/:owner/:cluster/${target.kind}/*`,
    admit: (actor, target, request) =>
      admitInCluster(deps, actor, verbOf(request, target.kind === 'k8s' ? 'k8s' : 'proxy', target.rest), target, request),
    handle: ({ me, cluster }, target, request, server) =>
      (target.kind === 'k8s' ? passThroughAnswer : specAnswer)(deps, me, cluster, target.rest, request, undefined, server),
  })

/**
 * The verb of each request to a family's route (service.ts proxiedVerb) decides what the caller
 * needs; a write or session is named to the audit trail here, before it may be refused.
 */
const proxiedRequest = (family: 'k8s' | 'proxy') => (request: Request) => {
  const rest = restOf(request)
  const verb = verbOf(request, family, rest)
  auditKubernetes(verb === 'read' ? undefined : kubernetesCallOf(request.method, family, rest, new URL(request.url).search))
  return verb
}

interface RelayContext {
  me: Actor
  cluster: ClusterScope
  request: Request
  body: unknown
  server: Server<unknown> | null
  set: Parameters<typeof finalResponse>[0]
}

/** A family's wildcard handler: relays through `answerOf` only the methods Kubernetes takes (PROPFIND, QUERY and such: 405). */
const relayThrough =
  (deps: Deps, answerOf: typeof passThroughAnswer) =>
  async ({ me, cluster, request, body, server, set }: RelayContext) => {
    assertServedMethod(request.method)
    const answer = await answerOf(deps, me, cluster, restOf(request), request, body, server)
    if (answer && request.method === 'POST') await auditCreated(answer)
    return answer && finalResponse(set, answer)
  }

const RELAY_ERRORS = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody }
/** The kubectl endpoint's own failures are Kubernetes Status bodies (http/errors.ts). */
const KUBECTL_ERRORS = {
  400: KubernetesStatus,
  401: KubernetesStatus,
  403: KubernetesStatus,
  404: KubernetesStatus,
  422: KubernetesStatus,
  429: KubernetesStatus,
  502: KubernetesStatus,
  503: KubernetesStatus,
}

/** The member-cluster proxy: the native passthrough for kubectl and the spec's proxy routes. */
export const proxyRoutes = (deps: Deps) =>
  new Elysia({ name: 'clusters.proxy', prefix: '/api/v1' })
    .use(guard(deps))
    .use(proxyReads(deps))
    .all('/clusters/:owner/:cluster/k8s/*', relayThrough(deps, passThroughAnswer), {
      inCluster: proxiedRequest('k8s'),
      response: KUBECTL_ERRORS,
      detail: {
        summary:
          "Native Kubernetes passthrough: the member's answers come back unchanged, the platform's own refusals as Kubernetes Status bodies. Reads need read access and read:cluster; other verbs, and exec, attach, port-forward and any other upgrade, write access and write:cluster",
        tags: TAGS,
        'x-operations': PASSTHROUGH_OPERATIONS,
      },
    })
    .all('/clusters/:owner/:cluster/proxy/*', relayThrough(deps, specAnswer), {
      inCluster: proxiedRequest('proxy'),
      response: RELAY_ERRORS,
      detail: {
        summary: "The spec's proxy routes, one wildcard documented as each of them. Access as on the native passthrough",
        tags: TAGS,
        'x-operations': PROXY_OPERATIONS,
      },
    })
