import type { Server } from 'bun'
import { AppError } from '../../errors'
import { statusOf } from '../../http/errors'
import { asksUpgrade } from '../../http/websocket-upgrade'
import { jsonPatchDiff, type KubeObject } from '../../kube'
import { CONFINED, forwardedHeaders, isStreaming, mediaTypeOf, memberSearch, safeSegments, upstreamBody, upstreamPath } from './relay'
import { GROUPS } from './schemas'
import { relayUpgrade, type Target } from './service'

/**
 * The spec's proxy routes (`/proxy/{group}/{version}/…`, docs/decisions.md §3b), one code path for every
 * group, version and resource: `core` is the legacy group (`/api/v1`), anything else `/apis/g/v`.
 * Most requests are relayed as they are; the platform adds what the spec asks of it: creates
 * answer 200, GETs carry an ETag (304 on If-None-Match), a plain JSON PATCH is a desired object
 * diffed into a JSON patch, and the object-level views events, controller, scale and
 * horizontalpodautoscalers.
 */
export const SpecMessages = {
  badPath: 'a proxy path is {group}/{version}/[namespaces/{namespace}/]{resource}[/{name}[/{subresource}]]',
  noController: 'the object has no controlling owner',
  replicasRequired: 'replicas (an integer) is required',
  batchResources: 'resources (an array of at most 500 entries) is required',
  batchEntry: 'each entry of resources is an object with name, version and resource (and group, namespace when needed) as strings',
  qRequired: 'q (the JSON-encoded request object) is required',
  qInvalid: 'q must be a JSON-encoded request object (with its request)',
  filterInvalid: 'filter must be a JSON array of operations ({"$ref": "#/pointer"} or {"out": {"$ref": "#/pointer"}})',
} as const

const { meta: META, scanner: SCANNER, policy: POLICY, uiDatabase: UI_DB } = GROUPS

/**
 * Rule 1: render and report kinds are creates made cacheable as GETs with the request object in
 * `q`. A missing `q` is 400, except where the spec names 500 (images, policy reports).
 */
const RENDERS: Record<string, { missingQ: 'badRequest' | 'internal' }> = {
  [`${META}/renders`]: { missingQ: 'badRequest' },
  [`${META}/renderdashboards`]: { missingQ: 'badRequest' },
  [`${META}/rendermenus`]: { missingQ: 'badRequest' },
  [`${META}/resourcegraphs`]: { missingQ: 'badRequest' },
  [`${SCANNER}/images`]: { missingQ: 'internal' },
  [`${SCANNER}/cvereports`]: { missingQ: 'badRequest' },
  [`${POLICY}/policyreports`]: { missingQ: 'internal' },
}

const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'

interface Parsed {
  group: string
  version: string
  namespace: string
  resource: string
  name: string
  subresource: string
}

/** Reads `group/version/[namespaces/ns/]resource[/name[/sub]]`; a namespace's own subresources stay cluster-scoped. Throws invalid. */
function parse(segments: string[]): Parsed {
  const [group, version, ...rest] = segments.map(decodeURIComponent)
  let tail = rest
  let namespace = ''
  if (tail[0] === 'namespaces' && tail.length >= 3 && !(tail.length === 3 && ['status', 'finalize'].includes(tail[2]!))) {
    namespace = tail[1]!
    tail = tail.slice(2)
  }
  if (!group || !version || tail.length < 1 || tail.length > 3) throw new AppError('invalid', SpecMessages.badPath)
  const [resource = '', name = '', subresource = ''] = tail
  return { group, version, namespace, resource, name, subresource }
}

/** The member's path of a target: `/api/v1/…` for core, `/apis/{g}/{v}/…` otherwise, every segment encoded. */
function memberPath(p: Omit<Parsed, 'subresource'> & { subresource?: string }): string {
  const prefix = p.group === 'core' ? ['api', p.version] : ['apis', p.group, p.version]
  return `/${[...prefix, ...(p.namespace ? ['namespaces', p.namespace] : []), p.resource, p.name, p.subresource ?? ''].filter(Boolean).map(encodeURIComponent).join('/')}`
}

/** The member's discovery document of a group version, its segments encoded as every member path. */
const discoveryPath = (group: string, version: string) => memberPath({ group, version, namespace: '', resource: '', name: '' })

interface MemberCall {
  method?: string
  body?: string
  headers?: Record<string, string>
}

/** The member's whole answer to one call of a composite route, over the kept-alive client as every finite relay. */
const memberAnswer = (target: Target, path: string, call: MemberCall = {}) =>
  target.relay({
    method: call.method ?? 'GET',
    path,
    body: call.body ?? null,
    streaming: false,
    whole: true,
    headers: {
      accept: 'application/json',
      ...(call.body ? { 'content-type': 'application/json' } : {}),
      ...target.identity,
      ...call.headers,
    },
  })

/** A JSON document from the member, or its own error passed through as it is (AnswerError). */
async function memberJson(target: Target, path: string, call: MemberCall = {}): Promise<KubeObject> {
  const res = await memberAnswer(target, path, call)
  if (!res.ok) throw new AnswerError(res)
  return (await res.json()) as KubeObject
}

/** The member's own answer (a Status), to be handed back unchanged. */
class AnswerError extends Error {
  constructor(readonly response: Response) {
    super('member answer')
  }
}

/** A composite route's own answer, confined as every relayed one (relay.ts CONFINED). */
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...CONFINED } })

/**
 * A strong validator of exact bytes: their length and their 64-bit wyhash. A cache check needs no
 * cryptographic hash (the member chooses the bytes anyway), and sha256 cost 2.4 µs per object and
 * 69 µs per 49 KB list where this costs 0.9 and 4.5 (docs/benchmarks.md).
 */
const etagOf = (bytes: Uint8Array) => `"${bytes.byteLength.toString(36)}-${Bun.hash.wyhash(bytes).toString(36)}"`

/** Buffers a GET answer and gives it a strong ETag of its exact bytes; a matching If-None-Match is 304 with no body. */
async function withETag(request: Request, res: Response): Promise<Response> {
  if (res.status !== 200) return res
  const bytes = await res.bytes()
  const etag = etagOf(bytes)
  // The answer is the platform's own (relay.ts made it): its headers are taken over, not copied.
  const headers = res.headers
  headers.set('etag', etag)
  const wanted = request.headers.get('if-none-match')
  if (
    wanted
      ?.split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .includes(etag)
  )
    return new Response(null, { status: 304, headers: { etag } })
  return new Response(bytes, { status: 200, headers })
}

/** A 201 from the member is the spec's 200 (creates answer the created object with 200). */
const createdAs200 = (res: Response) => (res.status === 201 ? new Response(res.body, { status: 200, headers: res.headers }) : res)

/**
 * Serves one admitted request under `/proxy/`. `rest` is the raw (still encoded) path after
 * `/proxy/`; an upgrade (exec, attach, port-forward) is relayed to the member's path of it.
 * Throws notFound, invalid, upstream; the member's own refusals come back unchanged.
 */
export async function proxyRequest(
  target: Target,
  rest: string,
  request: Request,
  parsedBody: unknown,
  server: Server<unknown> | null,
): Promise<Response | undefined> {
  const segments = safeSegments(rest)
  if (segments.length === 1 && segments[0] === 'batch-delete') return batchDelete(target, parsedBody)
  const p = parse(segments)
  if (asksUpgrade(request)) return relayUpgrade(target, memberPath(p).split('/').filter(Boolean), request, server)
  const url = new URL(request.url)
  // A watch or a followed log may sit idle far longer than the server's idle timeout.
  if (isStreaming(request.method, segments, url.searchParams)) server?.timeout(request, 0)
  try {
    return await serve(target, p, request, url, parsedBody)
  } catch (error) {
    if (error instanceof AnswerError) return error.response
    throw error
  }
}

async function serve(target: Target, p: Parsed, request: Request, url: URL, parsedBody: unknown): Promise<Response> {
  const query = new URLSearchParams(memberSearch(url.search))
  const convertToTable = query.get('convertToTable') === 'true'
  query.delete('convertToTable')
  const filter = query.get('filter')
  query.delete('filter')
  const search = query.size > 0 ? `?${query}` : ''
  if (filter !== null && request.method === 'GET')
    return withETag(request, json(applyFilter(await memberJson(target, `${memberPath(p)}${search}`), filter)))
  const render = RENDERS[`${p.group}/${p.resource}`]
  if (render && request.method === 'GET' && !p.name)
    return withETag(request, json(await renderFromQuery(target, p, query.get('q'), render.missingQ)))
  if (p.group === UI_DB && p.resource === 'databaseconfigurations' && request.method === 'GET' && p.name)
    return databaseConfiguration(target, p, search, request)
  if (request.method === 'GET' && p.resource === 'all-available' && !p.name) return withETag(request, json(await allAvailable(target, p)))
  if (request.method === 'GET' && p.name && p.subresource === 'events') return withETag(request, json(await eventsOf(target, p)))
  if (request.method === 'GET' && p.name && p.subresource === 'controller') return withETag(request, json(await controllerOf(target, p)))
  if (request.method === 'GET' && p.name && p.subresource === 'horizontalpodautoscalers')
    return withETag(request, json(await autoscalersOf(target, p)))
  if (request.method === 'GET' && p.name && p.subresource === 'metrics')
    return withETag(request, json(await memberJson(target, metricsPath(p))))
  if (request.method === 'PUT' && p.subresource === 'scale') return json(await scaleTo(target, p, parsedBody))
  // Only plain JSON is a desired object; JSON, merge and strategic merge patches and apply go as sent.
  if (request.method === 'PATCH' && mediaTypeOf(request.headers.get('content-type')) === 'application/json')
    return json(await patchToDesired(target, p, parsedBody))
  const path = upstreamPath(target.connection, memberPath(p).split('/').filter(Boolean), search)
  const streaming = isStreaming(request.method, [p.subresource], url.searchParams)
  const headers = forwardedHeaders(request, target.identity)
  if (convertToTable) headers.accept = TABLE_ACCEPT
  // The ETag covers the bytes the client gets: no compression for buffered GETs.
  if (request.method === 'GET' && !streaming) delete headers['accept-encoding']
  const res = await target.relay({
    method: request.method,
    path,
    headers,
    body: upstreamBody(request, parsedBody),
    streaming,
    // Its ETag covers the whole answer: read whole, within the buffer's bounds.
    whole: request.method === 'GET' && !streaming,
  })
  if (request.method === 'GET' && !streaming) return withETag(request, res)
  return request.method === 'POST' ? createdAs200(res) : res
}

/** The Events whose involvedObject is the object (by uid, the field selector the apiserver serves). */
async function eventsOf(target: Target, p: Parsed): Promise<KubeObject> {
  const object = await memberJson(target, memberPath({ ...p, subresource: '' }))
  const selector = encodeURIComponent(`involvedObject.uid=${object.metadata?.uid ?? ''}`)
  const base = p.namespace ? `/api/v1/namespaces/${encodeURIComponent(p.namespace)}/events` : '/api/v1/events'
  return memberJson(target, `${base}?fieldSelector=${selector}`)
}

/** The object's controlling owner (ownerReferences with controller: true), fetched from the member. */
async function controllerOf(target: Target, p: Parsed): Promise<KubeObject> {
  const object = await memberJson(target, memberPath({ ...p, subresource: '' }))
  const refs = (object.metadata?.ownerReferences ?? []) as { apiVersion: string; kind: string; name: string; controller?: boolean }[]
  const ref = refs.find((r) => r.controller === true)
  if (!ref) throw new AppError('notFound', SpecMessages.noController)
  const [group, version] = ref.apiVersion.includes('/') ? (ref.apiVersion.split('/') as [string, string]) : ['core', ref.apiVersion]
  const resource = await resourceOfKind(target, group, version, ref.kind)
  return memberJson(target, memberPath({ group, version, namespace: p.namespace, resource, name: ref.name }))
}

/** The plural resource name of `kind` in a group/version, from the member's discovery. */
async function resourceOfKind(target: Target, group: string, version: string, kind: string): Promise<string> {
  const list = (await memberJson(target, discoveryPath(group, version))) as {
    resources?: { name: string; kind: string }[]
  }
  const found = list.resources?.find((r) => r.kind === kind && !r.name.includes('/'))
  if (!found) throw new AppError('notFound', SpecMessages.noController)
  return found.name
}

/** The HorizontalPodAutoscalers of the object's namespace whose scaleTargetRef names its kind and name. */
async function autoscalersOf(target: Target, p: Parsed): Promise<KubeObject> {
  const object = await memberJson(target, memberPath({ ...p, subresource: '' }))
  const list = await memberJson(target, `/apis/autoscaling/v2/namespaces/${encodeURIComponent(p.namespace)}/horizontalpodautoscalers`)
  const items = ((list.items ?? []) as { spec?: { scaleTargetRef?: { kind?: string; name?: string } } }[]).filter(
    (hpa) => hpa.spec?.scaleTargetRef?.kind === object.kind && hpa.spec?.scaleTargetRef?.name === p.name,
  )
  return { ...list, items } as KubeObject
}

/** metrics.k8s.io's path for a node's or a pod's metrics. */
function metricsPath(p: Parsed): string {
  const base = '/apis/metrics.k8s.io/v1beta1'
  return p.resource === 'nodes'
    ? `${base}/nodes/${encodeURIComponent(p.name)}`
    : `${base}/namespaces/${encodeURIComponent(p.namespace)}/pods/${encodeURIComponent(p.name)}`
}

/** PUT …/scale with `{replicas}`: the current Scale with spec.replicas changed, written back. */
async function scaleTo(target: Target, p: Parsed, body: unknown): Promise<KubeObject> {
  const replicas = (body as { replicas?: unknown } | undefined)?.replicas
  if (!Number.isInteger(replicas) || (replicas as number) < 0 || (replicas as number) > 2 ** 31 - 1)
    throw new AppError('invalid', SpecMessages.replicasRequired, [{ field: 'replicas', message: 'must be a non-negative int32' }])
  const path = memberPath({ ...p, subresource: 'scale' })
  const scale = await memberJson(target, path)
  return memberJson(target, path, { method: 'PUT', body: JSON.stringify({ ...scale, spec: { ...(scale.spec as object), replicas } }) })
}

/**
 * A PATCH with plain JSON is the desired object (docs/decisions.md §3): fields it leaves out are removed,
 * server-owned metadata and status are kept, and the JSON patch carries a test of the
 * resourceVersion it was computed from, so a concurrent change is a 409 instead of being undone.
 */
async function patchToDesired(target: Target, p: Parsed, body: unknown): Promise<KubeObject> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('invalid', 'a plain JSON PATCH body must be the desired object')
  const path = memberPath(p)
  const current = await memberJson(target, path)
  const desired = body as KubeObject
  const serverOwned = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields', 'selfLink']
  const metadata = { ...(desired.metadata ?? {}) } as Record<string, unknown>
  for (const key of serverOwned)
    if (current.metadata && key in current.metadata) metadata[key] = (current.metadata as Record<string, unknown>)[key]
  const target_ = { ...desired, metadata, ...(current.status !== undefined ? { status: current.status } : {}) }
  const operations = [
    { op: 'test', path: '/metadata/resourceVersion', value: current.metadata?.resourceVersion },
    ...jsonPatchDiff(current, target_),
  ]
  return memberJson(target, path, {
    method: 'PATCH',
    body: JSON.stringify(operations),
    headers: { 'content-type': 'application/json-patch+json' },
  })
}

/** Rule 1: `q` decoded and created upstream; the answer is the filled object, 200. */
async function renderFromQuery(target: Target, p: Parsed, q: string | null, missing: 'badRequest' | 'internal'): Promise<KubeObject> {
  if (q === null || q === '') throw new AppError(missing, SpecMessages.qRequired)
  let object: unknown
  try {
    object = JSON.parse(q)
  } catch {
    throw new AppError('badRequest', SpecMessages.qInvalid)
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new AppError('badRequest', SpecMessages.qInvalid)
  return memberJson(target, memberPath(p), { method: 'POST', body: JSON.stringify(object) })
}

/**
 * Rule 2: every query parameter but filter, convertToTable and the platform's own (memberSearch) goes to the member; resourceVersion
 * is cleared so the ETag stays stable; the member's status passes through, but 401 becomes 403.
 */
async function databaseConfiguration(target: Target, p: Parsed, search: string, request: Request): Promise<Response> {
  const res = await memberAnswer(target, `${memberPath(p)}${search}`)
  if (!res.ok) return new Response(res.body, { status: res.status === 401 ? 403 : res.status, headers: res.headers })
  const object = (await res.json()) as KubeObject
  if (object.metadata) delete object.metadata.resourceVersion
  const answer = await withETag(request, json(object))
  answer.headers.set('cache-control', 'private, no-cache')
  return answer
}

/** `{Kind: [names]}` over the group/version's listable resources (all namespaces). */
async function allAvailable(target: Target, p: Parsed): Promise<Record<string, string[]>> {
  const discovery = (await memberJson(target, discoveryPath(p.group, p.version))) as {
    resources?: { name: string; kind: string; verbs?: string[] }[]
  }
  const listable = (discovery.resources ?? []).filter((r) => !r.name.includes('/') && r.verbs?.includes('list'))
  const result: Record<string, string[]> = {}
  for (const r of listable) {
    const list = await memberJson(
      target,
      memberPath({ group: p.group, version: p.version, namespace: '', resource: r.name, name: '' }),
    ).catch((): KubeObject => ({ metadata: {}, items: [] }))
    result[r.kind] = ((list.items ?? []) as KubeObject[]).map((item) => item.metadata?.name ?? '').filter(Boolean)
  }
  return result
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A JSON pointer (`#/a/b` or `/a/b`) into `doc`; undefined when it leads nowhere. */
function pointer(doc: Json, ref: string): Json | undefined {
  const path = ref.replace(/^#/, '')
  if (path === '' || path === '/') return doc
  let at: Json | undefined = doc
  for (const raw of path.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (at === null || typeof at !== 'object') return undefined
    at = Array.isArray(at) ? at[Number(key)] : at[key]
  }
  return at
}

/**
 * docs/decisions.md §3's json-filter: a JSON array of operations applied in turn; `{"$ref": ptr}` fetches,
 * `{out: {"$ref": ptr}, …}` builds an object; when the current value is an array, an operation
 * maps over its elements. Throws badRequest for anything else.
 */
function applyFilter(doc: unknown, filter: string): unknown {
  let operations: unknown
  try {
    operations = JSON.parse(filter)
  } catch {
    throw new AppError('badRequest', SpecMessages.filterInvalid)
  }
  if (!Array.isArray(operations)) throw new AppError('badRequest', SpecMessages.filterInvalid)
  const refOf = (op: unknown) =>
    typeof op === 'object' && op !== null && typeof (op as { $ref?: unknown }).$ref === 'string' ? (op as { $ref: string }).$ref : undefined
  const one = (op: unknown, value: Json): Json | undefined => {
    const ref = refOf(op)
    if (ref !== undefined) return pointer(value, ref)
    if (typeof op !== 'object' || op === null || Array.isArray(op)) throw new AppError('badRequest', SpecMessages.filterInvalid)
    const out: Record<string, Json> = {}
    for (const [key, inner] of Object.entries(op)) {
      const innerRef = refOf(inner)
      if (innerRef === undefined) throw new AppError('badRequest', SpecMessages.filterInvalid)
      const picked = pointer(value, innerRef)
      if (picked !== undefined) out[key] = picked
    }
    return out
  }
  let value = doc as Json
  for (const op of operations)
    value = (Array.isArray(value) ? value.map((item) => one(op, item) ?? null) : (one(op, value) ?? null)) as Json
  return value
}

const BATCH_FIELDS = ['namespace', 'name', 'group', 'version', 'resource'] as const
type BatchEntry = Record<(typeof BATCH_FIELDS)[number], string>

/** An entry's identity, its fields as sent when each is a string; undefined for anything else (`null`, a number, a field of another type). */
function batchEntry(entry: unknown): BatchEntry | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined
  const id = {} as BatchEntry
  for (const field of BATCH_FIELDS) {
    const value = (entry as Record<string, unknown>)[field] ?? ''
    if (typeof value !== 'string') return undefined
    id[field] = value
  }
  return id
}

/** Rule 3: each entry deleted on its own; only the failures are listed, with the member's Status. Throws invalid. */
async function batchDelete(target: Target, body: unknown): Promise<Response> {
  const resources = (body as { resources?: unknown } | undefined)?.resources
  if (!Array.isArray(resources) || resources.length > 500)
    throw new AppError('invalid', SpecMessages.batchResources, [{ field: 'resources', message: 'must be an array of at most 500 entries' }])
  const failed: (Partial<BatchEntry> & { status: unknown })[] = []
  for (const entry of resources as unknown[]) {
    const id = batchEntry(entry)
    try {
      if (!id?.name || !id.version || !id.resource) throw new AppError('invalid', SpecMessages.batchEntry)
      safeSegments([id.namespace, id.name, id.group, id.version, id.resource].filter(Boolean).map(encodeURIComponent).join('/'))
      await memberJson(
        target,
        memberPath({ group: id.group || 'core', version: id.version, namespace: id.namespace, resource: id.resource, name: id.name }),
        { method: 'DELETE' },
      )
    } catch (error) {
      const status =
        error instanceof AnswerError
          ? await error.response.json().catch(() => ({ kind: 'Status', status: 'Failure', code: error.response.status }))
          : {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              message: error instanceof AppError ? error.message : 'the delete failed',
              code: error instanceof AppError ? statusOf(error.kind) : 500,
            }
      failed.push({ ...id, status })
    }
  }
  return json({ resourcesStatus: failed })
}
