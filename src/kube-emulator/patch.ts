/**
 * The three patch formats the API server accepts: RFC 6902 JSON patch, RFC 7386 merge patch and
 * Kubernetes strategic merge patch. Each returns a new document and throws a Status on bad input:
 * 400 for malformed patches, 422 for a well-formed patch that cannot apply (failed `test`, missing path).
 */
import { applyJsonPatch, checkPatchKey, clone, type Invalid, isObject, kubeStatus, mergePatch } from '../kube'

export type PatchType = 'json' | 'merge' | 'strategic'

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
}

/** Applies a patch of the given type; `invalid` builds the 422 for ops that cannot apply. */
export function applyPatch(type: PatchType, doc: unknown, patch: unknown, invalid: Invalid): unknown {
  if (type === 'json') return applyJsonPatch(doc, patch, invalid)
  if (!isObject(patch)) throw kubeStatus.badRequest('the patch must be a JSON object')
  return type === 'merge' ? mergePatch(doc, patch) : strategicMerge(doc, patch)
}

/** Structural equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

/**
 * patchMergeKey of the core list fields (k8s.io/api struct tags). `ports` is keyed by
 * `containerPort` in containers and by `port` in Services; the list's own items tell which.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
}
/** Lists of scalars merged as sets. */
const SET_LISTS = new Set(['finalizers'])

function mergeKeyFor(field: string, items: unknown[]): string | undefined {
  if (field === 'ports') return items.some((i) => isObject(i) && 'containerPort' in i) ? 'containerPort' : 'port'
  return MERGE_KEYS[field]
}

const DIRECTIVE_PREFIXES = ['$setElementOrder/', '$deleteFromPrimitiveList/', '$retainKeys']

/** Kubernetes strategic merge: keyed lists merge item by item, `$patch` directives honoured. */
function strategicMerge(doc: unknown, patch: Record<string, unknown>): unknown {
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch
    return clone(rest)
  }
  if (patch.$patch === 'delete') return undefined
  const out: Record<string, unknown> = isObject(doc) ? clone(doc) : {}
  const retain = Array.isArray(patch.$retainKeys) ? new Set(patch.$retainKeys.map(String)) : undefined
  for (const [k, v] of Object.entries(patch)) {
    checkPatchKey(k)
    if (k === '$patch' || DIRECTIVE_PREFIXES.some((p) => k.startsWith(p))) continue
    if (v === null) {
      delete out[k]
      continue
    }
    const merged = mergeField(out[k], v, k)
    if (merged === undefined) delete out[k]
    else out[k] = merged
  }
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith('$deleteFromPrimitiveList/') || !Array.isArray(v)) continue
    const target = k.slice('$deleteFromPrimitiveList/'.length)
    const list = out[target]
    if (Array.isArray(list)) out[target] = list.filter((x) => !v.some((d) => deepEqual(d, x)))
  }
  if (retain) for (const k of Object.keys(out)) if (!retain.has(k)) delete out[k]
  return out
}

function mergeField(current: unknown, value: unknown, field: string): unknown {
  if (isObject(value)) return strategicMerge(current, value)
  if (!Array.isArray(value)) return clone(value)
  if (SET_LISTS.has(field)) {
    const base = Array.isArray(current) ? [...current] : []
    for (const v of value) if (!base.some((b) => deepEqual(b, v))) base.push(clone(v))
    return base
  }
  const key = mergeKeyFor(field, [...(Array.isArray(current) ? current : []), ...value])
  if (!key) return value.filter((v) => !(isObject(v) && v.$patch)).map(clone)
  const replaceAll = value.some((v) => isObject(v) && v.$patch === 'replace')
  const out: unknown[] = replaceAll || !Array.isArray(current) ? [] : clone(current)
  for (const item of value) {
    if (!isObject(item)) {
      out.push(clone(item))
      continue
    }
    if (item.$patch === 'replace') continue
    const at = out.findIndex((o) => isObject(o) && deepEqual(o[key], item[key]))
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1)
      continue
    }
    if (at >= 0) out[at] = strategicMerge(out[at], item)
    else out.push(strategicMerge(undefined, item))
  }
  return out
}
