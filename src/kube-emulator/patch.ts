/**
 * The three patch formats the API server accepts: RFC 6902 JSON patch, RFC 7386 merge patch and
 * Kubernetes strategic merge patch. Each returns a new document and throws a Status on bad input:
 * 400 for malformed patches, 422 for a well-formed patch that cannot apply (failed `test`, missing path).
 */
import { kubeStatus, type KubeStatusError } from '../clusters/kube-status'
import { clone, isObject } from './types'

export type PatchType = 'json' | 'merge' | 'strategic'

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
}

/** Keys that would reach an object's prototype instead of creating a field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

function checkKey(key: string): string {
  if (FORBIDDEN_KEYS.has(key)) throw kubeStatus.badRequest(`the patch uses a reserved key: ${JSON.stringify(key)}`)
  return key
}

/** More operations than this is a 413 on a real server too. */
const MAX_JSON_PATCH_OPS = 10000

type Fail = (message: string) => KubeStatusError

/** Applies a patch of the given type; `invalid` builds the 422 for ops that cannot apply. */
export function applyPatch(type: PatchType, doc: unknown, patch: unknown, invalid: Fail): unknown {
  if (type === 'json') return applyJsonPatch(doc, patch, invalid)
  if (!isObject(patch)) throw kubeStatus.badRequest('the patch must be a JSON object')
  return type === 'merge' ? mergePatch(doc, patch) : strategicMerge(doc, patch)
}

function parsePointer(path: unknown): string[] {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/')))
    throw kubeStatus.badRequest(`invalid JSON pointer: ${JSON.stringify(path)}`)
  return path === '' ? [] : path.slice(1).split('/').map((t) => checkKey(t.replaceAll('~1', '/').replaceAll('~0', '~')))
}

function arrayIndex(token: string, length: number, forAdd: boolean, invalid: Fail): number {
  if (forAdd && token === '-') return length
  const n = Number(token)
  const max = forAdd ? length : length - 1
  if (token === '' || !Number.isInteger(n) || n < 0 || n > max) throw invalid(`index ${token} out of bounds`)
  return n
}

/** Walks to the container of the pointer's last token. */
function parentOf(root: unknown, tokens: string[], invalid: Fail): unknown {
  let cur = root
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(t, cur.length, false, invalid)]
    else if (isObject(cur) && Object.hasOwn(cur, t)) cur = cur[t]
    else throw invalid(`doc is missing path: "/${tokens.join('/')}"`)
  }
  return cur
}

function getAt(root: unknown, tokens: string[], invalid: Fail): unknown {
  if (!tokens.length) return root
  const parent = parentOf(root, tokens, invalid)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false, invalid)]
  if (isObject(parent) && Object.hasOwn(parent, last)) return parent[last]
  throw invalid(`doc is missing path: "/${tokens.join('/')}"`)
}

function removeAt(root: unknown, tokens: string[], invalid: Fail): unknown {
  if (!tokens.length) throw invalid('cannot remove the whole document')
  const parent = parentOf(root, tokens, invalid)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false, invalid), 1)[0]
  if (isObject(parent) && Object.hasOwn(parent, last)) { const v = parent[last]; delete parent[last]; return v }
  throw invalid(`Unable to remove nonexistent key: ${last}: missing value`)
}

/** Returns the new root, since adding at '' replaces the document. */
function addAt(root: unknown, tokens: string[], value: unknown, replace: boolean, invalid: Fail): unknown {
  if (!tokens.length) return value
  const parent = parentOf(root, tokens, invalid)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, !replace, invalid)
    parent.splice(i, replace ? 1 : 0, value)
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, last)) throw invalid(`replace operation does not apply: doc is missing key: /${tokens.join('/')}: missing value`)
    parent[last] = value
  } else throw invalid(`doc is missing path: "/${tokens.join('/')}"`)
  return root
}

function applyJsonPatch(doc: unknown, patch: unknown, invalid: Fail): unknown {
  if (!Array.isArray(patch)) throw kubeStatus.badRequest('json patch must be an array of operations')
  if (patch.length > MAX_JSON_PATCH_OPS) throw kubeStatus.tooLarge(`the allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPS}, got ${patch.length}`)
  let root = clone(doc)
  for (const op of patch) {
    if (!isObject(op)) throw kubeStatus.badRequest('json patch operation must be an object')
    const path = parsePointer(op.path)
    switch (op.op) {
      case 'add': root = addAt(root, path, clone(requireValue(op)), false, invalid); break
      case 'replace': root = addAt(root, path, clone(requireValue(op)), true, invalid); break
      case 'remove': removeAt(root, path, invalid); break
      case 'move': { const v = removeAt(root, parsePointer(op.from), invalid); root = addAt(root, path, v, false, invalid); break }
      case 'copy': root = addAt(root, path, clone(getAt(root, parsePointer(op.from), invalid)), false, invalid); break
      case 'test':
        if (!deepEqual(getAt(root, path, invalid), requireValue(op))) throw invalid(`testing value /${path.join('/')} failed: test failed`)
        break
      default: throw kubeStatus.badRequest(`Unexpected kind: ${JSON.stringify(op.op)}`)
    }
  }
  return root
}

function requireValue(op: Record<string, unknown>): unknown {
  if (!Object.hasOwn(op, 'value')) throw kubeStatus.badRequest(`missing value for operation ${String(op.op)}`)
  return op.value
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

/** RFC 7386: objects merge recursively, `null` deletes, everything else (lists too) replaces. */
function mergePatch(doc: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch)
  const out: Record<string, unknown> = isObject(doc) ? clone(doc) : {}
  for (const [k, v] of Object.entries(patch)) {
    checkKey(k)
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

/**
 * patchMergeKey of the core list fields (k8s.io/api struct tags). `ports` is keyed by
 * `containerPort` in containers and by `port` in Services; the list's own items tell which.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name', initContainers: 'name', ephemeralContainers: 'name', volumes: 'name', env: 'name',
  imagePullSecrets: 'name', volumeMounts: 'mountPath', volumeDevices: 'devicePath', ownerReferences: 'uid',
  conditions: 'type', hostAliases: 'ip', topologySpreadConstraints: 'topologyKey',
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
  if (patch.$patch === 'replace') { const { $patch: _, ...rest } = patch; return clone(rest) }
  if (patch.$patch === 'delete') return undefined
  const out: Record<string, unknown> = isObject(doc) ? clone(doc) : {}
  const retain = Array.isArray(patch.$retainKeys) ? new Set(patch.$retainKeys.map(String)) : undefined
  for (const [k, v] of Object.entries(patch)) {
    checkKey(k)
    if (k === '$patch' || DIRECTIVE_PREFIXES.some((p) => k.startsWith(p))) continue
    if (v === null) { delete out[k]; continue }
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
    if (!isObject(item)) { out.push(clone(item)); continue }
    if (item.$patch === 'replace') continue
    const at = out.findIndex((o) => isObject(o) && deepEqual(o[key], item[key]))
    if (item.$patch === 'delete') { if (at >= 0) out.splice(at, 1); continue }
    if (at >= 0) out[at] = strategicMerge(out[at], item)
    else out.push(strategicMerge(undefined, item))
  }
  return out
}
