/**
 * HTTP and WebSocket routing on `Bun.serve`: authentication, request parsing into
 * group/version/resource, authorization, then one generic handler per verb over the registry.
 * Errors leave as `Status` bodies; an unexpected exception is logged and answered as a bare 500.
 */
import type { Server, ServerWebSocket } from 'bun'
import YAML from 'yaml'
import { isObject, kubeStatus, KubeStatusError, parseApiPath, successStatus, type KubeObject, type KubeStatus, type ResourcePath, type StatusCause } from '../kube'
import { coreVersions, groupDocument, groupList, openApiV2, openApiV3Document, openApiV3Index, resourceList, SERVER_VERSION } from './discovery'
import { ExecSession, prepareExec } from './exec'
import { podLogs } from './logs'
import { applyPatch, PATCH_CONTENT_TYPES, type PatchType } from './patch'
import { authenticate, authorize, impersonate, type UserSpec } from './rbac'
import { checkFieldLabels, groupResource, readScale, verbsOf, type DeleteOptions, type ListOptions, type Registry, type Resource } from './registry'
import { formatLabels, parseFieldSelector, parseLabelSelector } from './selectors'
import { fieldAt } from './strategies'
import { toTable, type IncludeObject } from './table'
import { watchStream } from './watch'

/** Everything a request handler may need, built once per emulator by `startEmulator`. */
export interface EmulatorContext {
  registry: Registry
  users: ReadonlyMap<string, UserSpec>
  virtual: ReadonlyMap<string, VirtualHandler>
  bookmarkIntervalMs: number
  tooLargeResourceVersionWaitMs: number
  logIntervalMs: number
  serverAddress: () => string
  log?: (line: string) => void
}

/** A parsed resource request, as the apiserver's RequestInfo: the target and the verb. */
export interface RequestInfo extends ResourcePath { verb: string }

/** What a virtual resource's handler gets; it answers a JSON body and a status code. */
export interface VirtualRequest { info: RequestInfo; resource: Resource; user: UserSpec; query: URLSearchParams; body: unknown }
export type VirtualHandler = (req: VirtualRequest) => { code: number; body: unknown }

const MAX_BODY_BYTES = 3 * 1024 * 1024
const MAX_JSON_DEPTH = 256
const JSON_HEADERS = { 'Content-Type': 'application/json' }

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } })
const statusResponse = (s: KubeStatus) => json(s, s.code)

/** Kubernetes booleans: absent, 'false' and '0' are false; anything else, even '', is true. */
const queryFlag = (q: URLSearchParams, key: string) => q.has(key) && q.get(key) !== 'false' && q.get(key) !== '0'

const UNAUTHENTICATED_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz'])

/** Serves one request; returns undefined when the request was upgraded to a WebSocket. */
export async function handle(ctx: EmulatorContext, req: Request, server: Server<ExecSession>): Promise<Response | undefined> {
  const url = new URL(req.url)
  try {
    if (UNAUTHENTICATED_PATHS.has(url.pathname)) return url.pathname === '/version' ? json(SERVER_VERSION) : new Response('ok')
    const requester = authenticate(ctx.users, req.headers.get('authorization'))
    if (!requester) throw kubeStatus.unauthorized()
    const user = impersonate(requester, req.headers, ctx.users)
    const discovery = req.method === 'GET' ? serveDiscovery(ctx, url.pathname) : undefined
    if (discovery) return discovery
    const info = parsePath(req.method, url)
    if (!info) throw kubeStatus.pathNotFound()
    const resource = ctx.registry.lookup(info.group, info.version, info.resource)
    if (!resource) throw kubeStatus.pathNotFound()
    if (info.namespace && !resource.strategy.namespaced) throw kubeStatus.pathNotFound()
    checkAccess(user, info, resource)
    if (resource.virtual) return await serveVirtual(ctx, req, url, info, resource, user)
    const isPod = resource.group === '' && resource.resource === 'pods'
    if ((info.subresource === 'exec' || info.subresource === 'log') && !isPod) throw kubeStatus.pathNotFound()
    if (info.subresource === 'exec') return serveExec(ctx, req, url, info, resource, server)
    if (info.subresource === 'log') { server.timeout(req, 0); return podLogs(ctx.registry, resource, info, url.searchParams, ctx.logIntervalMs, req.signal) }
    if (info.verb === 'watch') server.timeout(req, 0)
    return await serveResource(ctx, req, url, info, resource)
  } catch (e) {
    if (e instanceof KubeStatusError) return statusResponse(e.status)
    ctx.log?.(`internal error on ${req.method} ${url.pathname}: ${e instanceof Error ? e.message : String(e)}`)
    return statusResponse(kubeStatus.internal('unexpected server error').status)
  }
}

function serveDiscovery(ctx: EmulatorContext, path: string): Response | undefined {
  const parts = path.split('/').filter(Boolean)
  if (path === '/api' || path === '/api/') return json(coreVersions(ctx.serverAddress()))
  if (path === '/apis' || path === '/apis/') return json(groupList(ctx.registry))
  if (path === '/openapi/v2') return json(openApiV2())
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

function optional(doc: object | undefined): Response {
  if (!doc) throw kubeStatus.pathNotFound()
  return json(doc)
}

const VERBS: Record<string, [collection: string, item: string]> = {
  GET: ['list', 'get'], POST: ['create', 'create'], PUT: ['update', 'update'], PATCH: ['patch', 'patch'], DELETE: ['deletecollection', 'delete'],
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

function checkAccess(user: UserSpec, info: RequestInfo, r: Resource): void {
  const verb = info.subresource === 'exec' ? 'create' : info.verb
  const decision = authorize(user, { ...info, verb })
  if (!decision.allowed) throw kubeStatus.forbidden(groupResource(r), info.name, user.name, verb, info.namespace, info.subresource)
}

/** Adds apiVersion and kind for the version the client asked for. */
export function present(r: Resource, version: string, obj: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, ...rest } = obj
  return { apiVersion: r.group ? `${r.group}/${version}` : version, kind: r.strategy.kind, ...rest }
}

/** Reads and parses a JSON body; oversized, too deep or malformed bodies are 4xx Status errors. */
async function readJson(req: Request): Promise<unknown> {
  const declared = Number(req.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  const text = await req.text()
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  if (!text.trim()) return undefined
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw kubeStatus.badRequest(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`)
  try { return JSON.parse(text) } catch (e) {
    throw kubeStatus.badRequest(`the body of the request could not be decoded as JSON: ${e instanceof Error ? e.message : 'syntax error'}`)
  }
}

/** Deepest bracket nesting outside strings, found in one pass before JSON.parse ever sees the text. */
function nestingDepth(text: string): number {
  let depth = 0, max = 0, inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) max = Math.max(max, ++depth)
    else if (c === 125 || c === 93) depth--
  }
  return max
}

/** The request body as an object of `r` in `version`; a different apiVersion or kind is a 400 as on a real server. */
async function readObject(req: Request, r: Resource, version: string): Promise<KubeObject> {
  const body = await readJson(req)
  if (!isObject(body)) throw kubeStatus.badRequest('the body of the request must be a JSON object')
  const expected = r.group ? `${r.group}/${version}` : version
  if (body.apiVersion !== undefined && body.apiVersion !== expected)
    throw kubeStatus.badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`)
  if (body.kind !== undefined && body.kind !== r.strategy.kind)
    throw kubeStatus.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${r.strategy.kind})`)
  if (body.metadata !== undefined && !isObject(body.metadata)) throw kubeStatus.badRequest('metadata must be an object')
  return { ...body, metadata: (body.metadata ?? {}) as KubeObject['metadata'] }
}

function listOptions(q: URLSearchParams, r: Resource): ListOptions {
  const fields = parseFieldSelector(q.get('fieldSelector') ?? '')
  checkFieldLabels(r, fields)
  const limit = q.get('limit')
  const n = limit === null ? 0 : Number(limit)
  if (!Number.isInteger(n) || n < 0) throw kubeStatus.badRequest(`invalid limit: ${limit}`)
  return { labels: parseLabelSelector(q.get('labelSelector') ?? ''), fields, limit: n, continueToken: q.get('continue') || undefined }
}

/** The apiserver's ListOptions rules on resourceVersion, resourceVersionMatch and continue; 422 and 400 in its words. */
function checkListVersion(q: URLSearchParams): void {
  const rv = q.get('resourceVersion') ?? ''
  const match = q.get('resourceVersionMatch') ?? ''
  const causes: StatusCause[] = []
  const field = 'resourceVersionMatch'
  if (match && !rv) causes.push({ reason: 'FieldValueForbidden', field, message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided' })
  if (match && q.get('continue')) causes.push({ reason: 'FieldValueForbidden', field, message: 'Forbidden: resourceVersionMatch is forbidden when continue is provided' })
  if (match && match !== 'Exact' && match !== 'NotOlderThan')
    causes.push({ reason: 'FieldValueNotSupported', field, message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""` })
  if (causes.length) throw kubeStatus.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', causes)
  if (q.get('continue') && rv && rv !== '0') throw kubeStatus.badRequest('specifying resource version is not allowed when using continue')
}

function wantsTable(req: Request): IncludeObject | undefined {
  const accept = req.headers.get('accept') ?? ''
  return accept.includes('as=Table') ? 'Metadata' : undefined
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject')
  if (v === null) return 'Metadata'
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v
  throw kubeStatus.badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`)
}

function deleteOptions(q: URLSearchParams, body: unknown): DeleteOptions {
  const b = isObject(body) ? body : {}
  const policy = b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground')
    throw kubeStatus.badRequest(`propagationPolicy: Unsupported value: "${String(policy)}"`)
  const pre = isObject(b.preconditions) ? b.preconditions : {}
  const dryRun = Array.isArray(b.dryRun) ? b.dryRun.length > 0 : q.has('dryRun')
  return {
    propagationPolicy: policy,
    dryRun,
    preconditions: { uid: typeof pre.uid === 'string' ? pre.uid : undefined, resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined },
  }
}

async function serveResource(ctx: EmulatorContext, req: Request, url: URL, info: RequestInfo, r: Resource): Promise<Response> {
  const reg = ctx.registry
  const q = url.searchParams
  const dryRun = q.has('dryRun')
  const ns = info.namespace
  if (!verbsOf(r).includes(info.verb)) throw kubeStatus.methodNotSupported(groupResource(r), info.verb)
  if (info.subresource === 'status') return serveStatus(ctx, req, info, r)
  if (info.subresource === 'scale' && r.strategy.scale) return serveScale(ctx, req, info, r)
  if (info.subresource) throw kubeStatus.pathNotFound()
  const out = (obj: KubeObject) => present(r, info.version, obj)
  const table = wantsTable(req)
  switch (info.verb) {
    case 'get': {
      const obj = out(reg.get(r, ns, info.name))
      return json(table ? toTable(r, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(q)) : obj)
    }
    case 'list': {
      checkListVersion(q)
      const res = reg.list(r, ns, listOptions(q, r))
      const items = res.items.map(out)
      const metadata = { resourceVersion: res.resourceVersion, ...(res.continueToken ? { continue: res.continueToken } : {}),
        ...(res.remainingItemCount !== undefined ? { remainingItemCount: res.remainingItemCount } : {}) }
      if (table) return json(toTable(r, items, metadata, includeObject(q)))
      return json({ kind: `${r.strategy.kind}List`, apiVersion: r.group ? `${r.group}/${info.version}` : info.version, metadata,
        items: r.strategy.custom ? items : res.items })
    }
    case 'watch': return serveWatch(ctx, url, info, r, table ? (obj) => toTable(r, [out(obj)], { resourceVersion: obj.metadata.resourceVersion }, includeObject(q)) : out)
    case 'create': {
      if (info.name) throw kubeStatus.methodNotSupported(groupResource(r), 'create')
      const created = reg.create(r, ns, await readObject(req, r, info.version), { dryRun })
      return json(out(created), 201)
    }
    case 'update': return json(out(reg.update(r, ns, info.name, await readObject(req, r, info.version), { dryRun })))
    case 'patch': {
      const contentType = req.headers.get('content-type') ?? ''
      const text = await req.text()
      if (contentType.split(';')[0].trim().toLowerCase() === APPLY_PATCH) return serveApply(reg, r, info, q, text, dryRun)
      return json(out(patchObject(reg, r, info, text, contentType, dryRun)))
    }
    case 'delete': {
      const { object, gone } = reg.delete(r, ns, info.name, deleteOptions(q, await readJson(req)))
      if (!gone || r.strategy.returnsDeletedObject) return json(out(object))
      return json(successStatus(groupResource(r), info.name, object.metadata.uid ?? ''))
    }
    case 'deletecollection': {
      const deleted = reg.deleteCollection(r, ns, listOptions(q, r), deleteOptions(q, await readJson(req)))
      return json({ kind: `${r.strategy.kind}List`, apiVersion: r.group ? `${r.group}/${info.version}` : info.version,
        metadata: { resourceVersion: reg.currentResourceVersion() }, items: deleted.map(out) })
    }
  }
  throw kubeStatus.methodNotSupported(groupResource(r), info.verb)
}

/** A patch body's type (from its Content-Type) and parsed JSON; 415, 413 and 400 as a real server answers. */
function parsePatch(contentType: string, text: string, strategicMerge: boolean): { type: PatchType; patch: unknown } {
  const type = PATCH_CONTENT_TYPES[contentType.split(';')[0].trim().toLowerCase()]
  const accepted = [...Object.keys(PATCH_CONTENT_TYPES).filter((t) => strategicMerge || PATCH_CONTENT_TYPES[t] !== 'strategic'), APPLY_PATCH]
  if (!type || (type === 'strategic' && !strategicMerge)) throw kubeStatus.unsupportedMediaType(accepted)
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw kubeStatus.badRequest(`the patch nests deeper than ${MAX_JSON_DEPTH} levels`)
  try { return { type, patch: JSON.parse(text) } } catch { throw kubeStatus.badRequest('error decoding patch: invalid JSON') }
}

/** Applies a patch to the current object; a resourceVersion inside the patch makes the write conditional. */
function patchTarget(r: Resource, info: RequestInfo, current: KubeObject, text: string, contentType: string): KubeObject {
  const { type, patch } = parsePatch(contentType, text, r.strategy.strategicMerge === true)
  const invalid = (message: string) => kubeStatus.invalid({ group: r.group, kind: r.strategy.kind }, info.name,
    [{ reason: 'FieldValueInvalid', message, field: 'patch' }])
  const result = applyPatch(type, present(r, info.version, current), patch, invalid)
  if (!isObject(result) || !isObject(result.metadata)) throw kubeStatus.badRequest('the patch removed the object\'s metadata')
  const patched = result as KubeObject
  patched.metadata.resourceVersion ??= current.metadata.resourceVersion
  return patched
}

const APPLY_PATCH = 'application/apply-patch+yaml'

/** An apply configuration: YAML (JSON being YAML) holding one object of `r`; 400 when it is not. */
function parseApplyConfiguration(r: Resource, info: RequestInfo, text: string): KubeObject {
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  let body: unknown
  try { body = YAML.parse(text, { maxAliasCount: 100 }) } catch (e) {
    throw kubeStatus.badRequest(`error decoding YAML: ${e instanceof Error ? e.message.split('\n')[0] : 'invalid document'}`)
  }
  if (!isObject(body) || !isObject(body.metadata)) throw kubeStatus.badRequest('the apply configuration must be an object with metadata')
  const expected = r.group ? `${r.group}/${info.version}` : info.version
  if (body.apiVersion !== expected || body.kind !== r.strategy.kind)
    throw kubeStatus.badRequest(`the apply configuration must name apiVersion ${expected} and kind ${r.strategy.kind}`)
  if (body.metadata.name !== undefined && body.metadata.name !== info.name)
    throw kubeStatus.badRequest(`the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${info.name})`)
  return { ...body, metadata: { ...body.metadata, name: info.name } } as KubeObject
}

/**
 * Server-side apply, approximated: a missing object is created (201); an existing one gets the
 * configuration merged in (strategic merge for built-in kinds, merge patch for custom resources).
 * There are no managed fields, so no apply conflicts, and fields dropped from a configuration stay.
 */
function serveApply(reg: Registry, r: Resource, info: RequestInfo, q: URLSearchParams, text: string, dryRun: boolean): Response {
  if (!q.get('fieldManager'))
    throw kubeStatus.invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }])
  const applied = parseApplyConfiguration(r, info, text)
  const out = (obj: KubeObject) => present(r, info.version, obj)
  let current: KubeObject
  try { current = reg.get(r, info.namespace, info.name) } catch (e) {
    if (e instanceof KubeStatusError && e.code === 404) return json(out(reg.create(r, info.namespace, applied, { dryRun })), 201)
    throw e
  }
  const invalid = (message: string) => kubeStatus.invalid({ group: r.group, kind: r.strategy.kind }, info.name, [{ reason: 'FieldValueInvalid', message, field: 'patch' }])
  const merged = applyPatch(r.strategy.strategicMerge ? 'strategic' : 'merge', present(r, info.version, current), applied, invalid) as KubeObject
  merged.metadata.resourceVersion = applied.metadata.resourceVersion ?? current.metadata.resourceVersion
  return json(out(reg.update(r, info.namespace, info.name, merged, { dryRun })))
}

function patchObject(reg: Registry, r: Resource, info: RequestInfo, text: string, contentType: string, dryRun: boolean, subresource?: 'status'): KubeObject {
  const current = reg.get(r, info.namespace, info.name)
  return reg.update(r, info.namespace, info.name, patchTarget(r, info, current, text, contentType), { dryRun, subresource })
}

async function serveStatus(ctx: EmulatorContext, req: Request, info: RequestInfo, r: Resource): Promise<Response> {
  if (!r.strategy.status) throw kubeStatus.pathNotFound()
  const reg = ctx.registry
  const out = (obj: KubeObject) => present(r, info.version, obj)
  if (info.verb === 'get') return json(out(reg.get(r, info.namespace, info.name)))
  if (info.verb === 'update') return json(out(reg.update(r, info.namespace, info.name, await readObject(req, r, info.version), { subresource: 'status' })))
  if (info.verb === 'patch') return json(out(patchObject(reg, r, info, await req.text(), req.headers.get('content-type') ?? '', false, 'status')))
  throw kubeStatus.methodNotSupported({ group: r.group, resource: `${r.resource}/status` }, info.verb)
}

function scaleOf(r: Resource, obj: KubeObject) {
  const s = readScale(r, obj)
  const sel = s.selector
  const matchLabels = isObject(sel) && isObject(sel.matchLabels) ? (sel.matchLabels as Record<string, string>) : undefined
  const selector = typeof sel === 'string' ? sel : matchLabels ? formatLabels(matchLabels) : ''
  const m = obj.metadata
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: s.spec }, status: { replicas: s.status, ...(selector ? { selector } : {}) },
  }
}

/**
 * `/scale` as an autoscaling/v1 Scale over the parent's replicas; writes bump the parent. The body
 * is read before the parent, so the read-modify-write below cannot interleave with another write.
 */
async function serveScale(ctx: EmulatorContext, req: Request, info: RequestInfo, r: Resource): Promise<Response> {
  const reg = ctx.registry
  if (info.verb === 'get') return json(scaleOf(r, reg.get(r, info.namespace, info.name)))
  if (info.verb !== 'update' && info.verb !== 'patch') throw kubeStatus.methodNotSupported({ group: r.group, resource: `${r.resource}/scale` }, info.verb)
  const replacement = info.verb === 'update' ? await readJson(req) : undefined
  const patch = info.verb === 'patch' ? parsePatch(req.headers.get('content-type') ?? '', await req.text(), true) : undefined
  const current = reg.get(r, info.namespace, info.name)
  const invalid = (causes: StatusCause[]) => kubeStatus.invalid({ group: 'autoscaling', kind: 'Scale' }, info.name, causes)
  const desired = patch
    ? applyPatch(patch.type, scaleOf(r, current), patch.patch, (m) => invalid([{ reason: 'FieldValueInvalid', message: m, field: 'patch' }]))
    : replacement
  const replicas = fieldAt(desired, ['spec', 'replicas'])
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw invalid([{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`, field: 'spec.replicas' }])
  const rv = fieldAt(desired, ['metadata', 'resourceVersion'])
  const next = structuredClone(current)
  let cursor: Record<string, unknown> = next
  const path = r.strategy.scale!.specReplicasPath
  for (const key of path.slice(0, -1)) cursor = (isObject(cursor[key]) ? cursor[key] : (cursor[key] = {})) as Record<string, unknown>
  cursor[path[path.length - 1]] = replicas
  next.metadata.resourceVersion = typeof rv === 'string' && rv ? rv : current.metadata.resourceVersion
  return json(scaleOf(r, reg.update(r, info.namespace, info.name, next)))
}

function serveWatch(ctx: EmulatorContext, url: URL, info: RequestInfo, r: Resource, render: (obj: KubeObject) => unknown): Response {
  const q = url.searchParams
  const opts = listOptions(q, r)
  includeObject(q)
  const timeout = q.get('timeoutSeconds')
  const body = watchStream(ctx.registry, r, {
    ...opts, limit: undefined, continueToken: undefined, namespace: info.namespace,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    allowBookmarks: queryFlag(q, 'allowWatchBookmarks'), sendInitialEvents: queryFlag(q, 'sendInitialEvents'),
    timeoutSeconds: timeout ? Number(timeout) : undefined, bookmarkIntervalMs: ctx.bookmarkIntervalMs,
    tooLargeResourceVersionWaitMs: ctx.tooLargeResourceVersionWaitMs,
    present: render, apiVersion: r.group ? `${r.group}/${info.version}` : info.version,
  })
  return new Response(body, { headers: { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' } })
}

async function serveVirtual(ctx: EmulatorContext, req: Request, url: URL, info: RequestInfo, r: Resource, user: UserSpec): Promise<Response> {
  const handler = ctx.virtual.get(`${r.group}/${r.resource}`)
  if (!handler || !verbsOf(r).includes(info.verb)) throw kubeStatus.methodNotSupported(groupResource(r), info.verb)
  const body = info.verb === 'create' ? await readJson(req) : undefined
  const res = handler({ info, resource: r, user, query: url.searchParams, body })
  return json(res.body, res.code)
}

function serveExec(ctx: EmulatorContext, req: Request, url: URL, info: RequestInfo, r: Resource, server: Server<ExecSession>): Response | undefined {
  const upgrade = (req.headers.get('upgrade') ?? '').toLowerCase()
  if (upgrade !== 'websocket') throw kubeStatus.badRequest('Upgrade request required')
  const pod = ctx.registry.get(r, info.namespace, info.name)
  const offered = (req.headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter(Boolean)
  const { session, protocol } = prepareExec(pod, url.searchParams, offered)
  // Bun echoes the client's first offer unless told otherwise, so the choice is always explicit.
  const headers = protocol ? { 'Sec-WebSocket-Protocol': protocol } : undefined
  if (server.upgrade(req, { data: session, headers })) return undefined
  throw kubeStatus.badRequest('Upgrade request required')
}

/** Bun's WebSocket handlers, delegating to the session prepared before the upgrade. */
export const execWebSocket = {
  open: (ws: ServerWebSocket<ExecSession>) => ws.data.open(ws),
  message: (ws: ServerWebSocket<ExecSession>, message: string | Buffer) => ws.data.receive(message),
  close: (ws: ServerWebSocket<ExecSession>) => ws.data.closed(),
  idleTimeout: 960,
}
