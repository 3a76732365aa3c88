/**
 * HTTP and WebSocket routing on `Bun.serve`: authentication, the request path parsed into
 * group/version/resource, authorization, then the handler of the verb (handlers/read, write, patch,
 * delete) or of a subresource the strategy declares (handlers/subresources). Errors leave as
 * `Status` bodies; an unexpected exception is logged and answered as a bare 500.
 */
import type { Server, ServerWebSocket } from 'bun'
import { KubeStatusError, kubeStatus, parseApiPath } from '../kube'
import type { Call, EmulatorContext, RequestInfo, WebSocketSession } from './context'
import {
  coreVersions,
  groupDocument,
  groupList,
  OPENAPI_V2_PROTOBUF,
  openApiV2,
  openApiV2Protobuf,
  openApiV3Document,
  openApiV3Index,
  resourceList,
  SERVER_VERSION,
} from './discovery'
import { remove, removeCollection } from './handlers/delete'
import { patch } from './handlers/patch'
import { get, list, watch } from './handlers/read'
import { json, queryFlag, readBody, statusResponse } from './handlers/request'
import { SUBRESOURCES } from './handlers/subresources'
import { create, update } from './handlers/write'
import { authenticate, authorize, impersonate, type UserSpec } from './rbac'
import { groupResource, type Resource, verbsOf } from './registry'
import type { Subresources } from './strategies'

const UNAUTHENTICATED_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz'])

/** The handler of each verb on a stored resource's main path. */
const VERB_HANDLERS: Record<string, (call: Call) => Promise<Response> | Response> = {
  get,
  list,
  watch,
  create,
  update,
  patch,
  delete: remove,
  deletecollection: removeCollection,
}

/** Serves one request; returns undefined when the request was upgraded to a WebSocket. */
export async function handle(ctx: EmulatorContext, req: Request, server: Server<WebSocketSession>): Promise<Response | undefined> {
  const url = new URL(req.url)
  try {
    if (UNAUTHENTICATED_PATHS.has(url.pathname)) return url.pathname === '/version' ? json(SERVER_VERSION) : new Response('ok')
    const authorization = req.headers.get('authorization')
    const requester = authorization ? authenticate(ctx.users, authorization) : ctx.certificateUser
    if (!requester) throw kubeStatus.unauthorized()
    const user = impersonate(requester, req.headers, ctx.users, ctx.registry)
    const discovery = req.method === 'GET' ? serveDiscovery(ctx, req, url.pathname) : undefined
    if (discovery) return discovery
    const info = parsePath(req.method, url)
    if (!info) throw kubeStatus.pathNotFound()
    const r = ctx.registry.lookup(info.group, info.version, info.resource)
    if (!r) throw kubeStatus.pathNotFound()
    if (info.namespace && !r.strategy.namespaced) throw kubeStatus.pathNotFound()
    checkAccess(ctx, user, info, r)
    if (r.virtual) return await serveVirtual(ctx, req, url, info, r, user)
    const call: Call = { ctx, req, url, info, r, server }
    if (info.subresource) {
      const name = info.subresource as keyof Subresources
      if (!Object.hasOwn(SUBRESOURCES, name) || r.strategy.subresources?.[name] === undefined) throw kubeStatus.pathNotFound()
      return await SUBRESOURCES[name].serve(call)
    }
    if (!verbsOf(r).includes(info.verb)) throw kubeStatus.methodNotSupported(groupResource(r), info.verb)
    return await VERB_HANDLERS[info.verb](call)
  } catch (e) {
    if (e instanceof KubeStatusError) return statusResponse(e.status)
    ctx.log?.(`internal error on ${req.method} ${url.pathname}: ${e instanceof Error ? e.message : String(e)}`)
    return statusResponse(kubeStatus.internal('unexpected server error').status)
  }
}

function serveDiscovery(ctx: EmulatorContext, req: Request, path: string): Response | undefined {
  const parts = path.split('/').filter(Boolean)
  if (path === '/api' || path === '/api/') return json(coreVersions(ctx.serverAddress()))
  if (path === '/apis' || path === '/apis/') return json(groupList(ctx.registry))
  if (path === '/openapi/v2') return openApiV2Response(req)
  if (path === '/openapi/v3') return json(openApiV3Index(ctx.registry))
  if (parts[0] === 'openapi' && parts[1] === 'v3') {
    const doc = openApiV3Document(ctx.registry, parts.slice(2).join('/'))
    return doc ? json(doc) : undefined
  }
  if (parts[0] === 'api' && parts.length === 2) return optional(resourceList(ctx.registry, '', parts[1]))
  if (parts[0] === 'apis' && parts.length === 2) return optional(groupDocument(ctx.registry, parts[1]))
  if (parts[0] === 'apis' && parts.length === 3) return optional(resourceList(ctx.registry, parts[1], parts[2]))
  return undefined
}

/**
 * kubectl asks `/openapi/v2` for protobuf (and cannot read JSON sent instead), others for JSON;
 * a request accepting neither gets 406.
 */
function openApiV2Response(req: Request): Response {
  const accept = req.headers.get('accept') ?? ''
  if (OPENAPI_V2_PROTOBUF.some((t) => accept.includes(t)))
    return new Response(openApiV2Protobuf(), { headers: { 'Content-Type': OPENAPI_V2_PROTOBUF[1] } })
  if (accept && !/application\/json|\*\/\*/.test(accept)) throw kubeStatus.notAcceptable(['application/json', OPENAPI_V2_PROTOBUF[1]])
  return json(openApiV2())
}

function optional(doc: object | undefined): Response {
  if (!doc) throw kubeStatus.pathNotFound()
  return json(doc)
}

const VERBS: Record<string, [collection: string, item: string]> = {
  GET: ['list', 'get'],
  POST: ['create', 'create'],
  PUT: ['update', 'update'],
  PATCH: ['patch', 'patch'],
  DELETE: ['deletecollection', 'delete'],
}

/** `/api/v1/...` or `/apis/{g}/{v}/...` into a RequestInfo; undefined when it is no resource path. */
function parsePath(method: string, url: URL): RequestInfo | undefined {
  const target = parseApiPath(url.pathname)
  const verbs = VERBS[method]
  if (!target || !verbs) return undefined
  let verb = target.name ? verbs[1] : verbs[0]
  if (verb === 'list' && queryFlag(url.searchParams, 'watch')) verb = 'watch'
  return { ...target, verb }
}

const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward'])

function checkAccess(ctx: EmulatorContext, user: UserSpec, info: RequestInfo, r: Resource): void {
  // Connecting to a pod (exec, attach, port-forward) is a create of the subresource, whatever the method.
  const verb = info.subresource && CONNECT_SUBRESOURCES.has(info.subresource) ? 'create' : info.verb
  const decision = authorize(user, { ...info, verb }, ctx.registry)
  if (!decision.allowed) throw kubeStatus.forbidden(groupResource(r), info.name, user.name, verb, info.namespace, info.subresource)
}

async function serveVirtual(
  ctx: EmulatorContext,
  req: Request,
  url: URL,
  info: RequestInfo,
  r: Resource,
  user: UserSpec,
): Promise<Response> {
  const handler = ctx.virtual.get(`${r.group}/${r.resource}`)
  if (!handler || !verbsOf(r).includes(info.verb)) throw kubeStatus.methodNotSupported(groupResource(r), info.verb)
  const body = info.verb === 'create' ? await readBody(req) : undefined
  const res = handler({ info, resource: r, user, query: url.searchParams, body, registry: ctx.registry })
  return json(res.body, res.code)
}

/** Bun's WebSocket handlers, delegating to the session prepared before the upgrade. */
export const sessionWebSocket = {
  open: (ws: ServerWebSocket<WebSocketSession>) => ws.data.open(ws),
  message: (ws: ServerWebSocket<WebSocketSession>, message: string | Buffer) => ws.data.receive(message),
  close: (ws: ServerWebSocket<WebSocketSession>) => ws.data.closed(),
  idleTimeout: 960,
}
