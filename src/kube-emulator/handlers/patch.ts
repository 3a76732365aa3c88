/**
 * PATCH: JSON patch, merge patch and strategic merge patch over the current object, and
 * server-side apply (`application/apply-patch+yaml`), approximated: a missing object is created
 * (201); an existing one gets the configuration merged in (strategic merge for built-in kinds,
 * merge patch for custom resources). There are no managed fields, so no apply conflicts, and
 * fields dropped from a configuration stay.
 */
import YAML from 'yaml'
import { isObject, type KubeObject, KubeStatusError, kubeStatus } from '../../kube'
import type { Call, RequestInfo } from '../context'
import { applyPatch, PATCH_CONTENT_TYPES, type PatchType } from '../patch'
import type { Registry, Resource, WriteOptions } from '../registry'
import { apiVersionOf, dryRunQuery, json, MAX_BODY_BYTES, MAX_JSON_DEPTH, nestingDepth, present } from './request'

const APPLY_PATCH = 'application/apply-patch+yaml'

const mediaType = (req: Request) => (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase()

/** A patch body's type (from its Content-Type) and parsed JSON; 415, 413 and 400 as a real server answers. */
export function parsePatch(req: Request, text: string, strategicMerge: boolean): { type: PatchType; patch: unknown } {
  const type = PATCH_CONTENT_TYPES[mediaType(req)]
  const accepted = [
    ...Object.keys(PATCH_CONTENT_TYPES).filter((t) => strategicMerge || PATCH_CONTENT_TYPES[t] !== 'strategic'),
    APPLY_PATCH,
  ]
  if (!type || (type === 'strategic' && !strategicMerge)) throw kubeStatus.unsupportedMediaType(accepted)
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw kubeStatus.badRequest(`the patch nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return { type, patch: JSON.parse(text) }
  } catch {
    throw kubeStatus.badRequest('error decoding patch: invalid JSON')
  }
}

const invalidPatch = (r: Resource, name: string) => (message: string) =>
  kubeStatus.invalid({ group: r.group, kind: r.strategy.kind }, name, [{ reason: 'FieldValueInvalid', message, field: 'patch' }])

/**
 * Patches the stored object and writes it back (the whole object, or only its status under
 * `/status`); a resourceVersion inside the patch makes the write conditional.
 */
export async function patchStored({ ctx, req, info, r }: Call, opts: WriteOptions): Promise<KubeObject> {
  const text = await req.text()
  const { type, patch } = parsePatch(req, text, r.strategy.strategicMerge === true)
  const current = ctx.registry.get(r, info.namespace, info.name)
  const result = applyPatch(type, present(r, info.version, current), patch, invalidPatch(r, info.name))
  if (!isObject(result) || !isObject(result.metadata)) throw kubeStatus.badRequest("the patch removed the object's metadata")
  const patched = result as KubeObject
  patched.metadata.resourceVersion ??= current.metadata.resourceVersion
  return ctx.registry.update(r, info.namespace, info.name, patched, opts)
}

export async function patch(call: Call): Promise<Response> {
  const { req, url, info, r } = call
  const dryRun = dryRunQuery(url.searchParams)
  if (mediaType(req) === APPLY_PATCH) return apply(call.ctx.registry, r, info, url.searchParams, await req.text(), dryRun)
  return json(present(r, info.version, await patchStored(call, { dryRun })))
}

/** An apply configuration: YAML (JSON being YAML) holding one object of `r`; 400 when it is not. */
function parseApplyConfiguration(r: Resource, info: RequestInfo, text: string): KubeObject {
  if (text.length > MAX_BODY_BYTES) throw kubeStatus.tooLarge()
  let body: unknown
  try {
    body = YAML.parse(text, { maxAliasCount: 100 })
  } catch (e) {
    throw kubeStatus.badRequest(`error decoding YAML: ${e instanceof Error ? e.message.split('\n')[0] : 'invalid document'}`)
  }
  if (!isObject(body) || !isObject(body.metadata)) throw kubeStatus.badRequest('the apply configuration must be an object with metadata')
  const expected = apiVersionOf(r, info.version)
  if (body.apiVersion !== expected || body.kind !== r.strategy.kind)
    throw kubeStatus.badRequest(`the apply configuration must name apiVersion ${expected} and kind ${r.strategy.kind}`)
  if (body.metadata.name !== undefined && body.metadata.name !== info.name)
    throw kubeStatus.badRequest(`the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${info.name})`)
  return { ...body, metadata: { ...body.metadata, name: info.name } } as KubeObject
}

function apply(reg: Registry, r: Resource, info: RequestInfo, q: URLSearchParams, text: string, dryRun: boolean): Response {
  if (!q.get('fieldManager'))
    throw kubeStatus.invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
      { reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' },
    ])
  const applied = parseApplyConfiguration(r, info, text)
  const out = (obj: KubeObject) => present(r, info.version, obj)
  let current: KubeObject
  try {
    current = reg.get(r, info.namespace, info.name)
  } catch (e) {
    if (e instanceof KubeStatusError && e.code === 404) return json(out(reg.create(r, info.namespace, applied, { dryRun })), 201)
    throw e
  }
  const merged = applyPatch(
    r.strategy.strategicMerge ? 'strategic' : 'merge',
    out(current),
    applied,
    invalidPatch(r, info.name),
  ) as KubeObject
  merged.metadata.resourceVersion = applied.metadata.resourceVersion ?? current.metadata.resourceVersion
  return json(out(reg.update(r, info.namespace, info.name, merged, { dryRun })))
}
