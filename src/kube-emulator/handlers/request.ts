/**
 * Reading a request the way the apiserver does: bodies (size and depth limits, JSON, the object of
 * the addressed kind), query options (list, delete, dryRun, Table), and the JSON responses.
 */
import { groupVersion, isObject, type KubeObject, type KubeStatus, kubeStatus, type StatusCause } from '../../kube'
import { decodeProtobuf, PROTOBUF } from '../protobuf'
import { checkFieldLabels, type DeleteOptions, type ListOptions, type Resource } from '../registry'
import { parseFieldSelector, parseLabelSelector } from '../selectors'
import type { IncludeObject } from '../table'

export const MAX_BODY_BYTES = 3 * 1024 * 1024
export const MAX_JSON_DEPTH = 256
export const JSON_HEADERS = { 'Content-Type': 'application/json' }

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } })
export const statusResponse = (s: KubeStatus) => json(s, s.code)

/** Kubernetes booleans: absent, 'false' and '0' are false; anything else, even '', is true. */
export const queryFlag = (q: URLSearchParams, key: string) => q.has(key) && q.get(key) !== 'false' && q.get(key) !== '0'

/** The apiVersion of `r` in the version the client addressed. */
export const apiVersionOf = (r: Resource, version: string) => groupVersion(r.group, version)

/** Adds apiVersion and kind for the version the client asked for. */
export function present(r: Resource, version: string, obj: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, ...rest } = obj
  return { apiVersion: apiVersionOf(r, version), kind: r.strategy.kind, ...rest }
}

/** Deepest bracket nesting outside strings, found in one pass before JSON.parse ever sees the text. */
export function nestingDepth(text: string): number {
  let depth = 0,
    max = 0,
    inString = false
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

/** Reads and parses a JSON (or Kubernetes protobuf) body; oversized, too deep or malformed bodies are 4xx Status errors. */
export async function readBody(req: Request): Promise<unknown> {
  const declared = Number(req.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  const type = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()
  if (type === PROTOBUF) {
    const bytes = new Uint8Array(await req.arrayBuffer())
    if (bytes.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
    return bytes.length ? decodeProtobuf(bytes) : undefined
  }
  const text = await req.text()
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  if (!text.trim()) return undefined
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw kubeStatus.badRequest(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return JSON.parse(text)
  } catch (e) {
    throw kubeStatus.badRequest(`the body of the request could not be decoded as JSON: ${e instanceof Error ? e.message : 'syntax error'}`)
  }
}

/** The request body as an object of `r` in `version`; a different apiVersion or kind is a 400 as on a real server. */
export async function readObject(req: Request, r: Resource, version: string): Promise<KubeObject> {
  const body = await readBody(req)
  if (!isObject(body)) throw kubeStatus.badRequest('the body of the request must be a JSON object')
  const expected = apiVersionOf(r, version)
  if (body.apiVersion !== undefined && body.apiVersion !== expected)
    throw kubeStatus.badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
    )
  if (body.kind !== undefined && body.kind !== r.strategy.kind)
    throw kubeStatus.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${r.strategy.kind})`)
  if (body.metadata !== undefined && !isObject(body.metadata)) throw kubeStatus.badRequest('metadata must be an object')
  return { ...body, metadata: (body.metadata ?? {}) as KubeObject['metadata'] }
}

/** `dryRun=All` on any write: validate and answer, persist nothing. Any other value is a 400. */
function dryRunOf(values: string[]): boolean {
  const bad = values.find((v) => v !== 'All')
  if (bad !== undefined) throw kubeStatus.badRequest(`dryRun: Unsupported value: "${bad}": supported values: "All"`)
  return values.length > 0
}
export const dryRunQuery = (q: URLSearchParams) => dryRunOf(q.getAll('dryRun'))

export function listOptions(q: URLSearchParams, r: Resource): ListOptions {
  const fields = parseFieldSelector(q.get('fieldSelector') ?? '')
  checkFieldLabels(r, fields)
  const limit = q.get('limit')
  const n = limit === null ? 0 : Number(limit)
  if (!Number.isInteger(n) || n < 0) throw kubeStatus.badRequest(`invalid limit: ${limit}`)
  return { labels: parseLabelSelector(q.get('labelSelector') ?? ''), fields, limit: n, continueToken: q.get('continue') || undefined }
}

/** The apiserver's ListOptions rules on resourceVersion, resourceVersionMatch and continue; 422 and 400 in its words. */
export function checkListVersion(q: URLSearchParams): void {
  const rv = q.get('resourceVersion') ?? ''
  const match = q.get('resourceVersionMatch') ?? ''
  const causes: StatusCause[] = []
  const field = 'resourceVersionMatch'
  if (match && !rv)
    causes.push({
      reason: 'FieldValueForbidden',
      field,
      message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    })
  if (match && q.get('continue'))
    causes.push({ reason: 'FieldValueForbidden', field, message: 'Forbidden: resourceVersionMatch is forbidden when continue is provided' })
  if (match && match !== 'Exact' && match !== 'NotOlderThan')
    causes.push({
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""`,
    })
  if (causes.length) throw kubeStatus.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', causes)
  if (q.get('continue') && rv && rv !== '0') throw kubeStatus.badRequest('specifying resource version is not allowed when using continue')
}

/** Whether the client asked for a Table (`Accept: …;as=Table`). */
export const wantsTable = (req: Request): boolean => (req.headers.get('accept') ?? '').includes('as=Table')

export function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject')
  if (v === null) return 'Metadata'
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v
  throw kubeStatus.badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`)
}

/** DeleteOptions from the body (kubectl) or the query; body fields win. */
export function deleteOptions(q: URLSearchParams, body: unknown): DeleteOptions {
  const b = isObject(body) ? body : {}
  const policy = b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined
  if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground')
    throw kubeStatus.badRequest(`propagationPolicy: Unsupported value: "${String(policy)}"`)
  const pre = isObject(b.preconditions) ? b.preconditions : {}
  const dryRun = Array.isArray(b.dryRun) ? dryRunOf(b.dryRun.map(String)) : dryRunQuery(q)
  return {
    propagationPolicy: policy,
    dryRun,
    preconditions: {
      uid: typeof pre.uid === 'string' ? pre.uid : undefined,
      resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
    },
  }
}
