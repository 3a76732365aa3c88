/**
 * RFC 6902 JSON patch and RFC 7386 merge patch as the apiserver answers them: JSON patch runs on
 * `fast-json-patch`, whose errors become Status errors (400 for a malformed patch, 422 through
 * `invalid` for a well-formed one that cannot apply: failed `test`, missing path). `jsonPatchDiff`
 * is the library's `compare`: the operations that turn one document into another.
 */
import { applyPatch, compare, JsonPatchError, type Operation } from 'fast-json-patch'
import { clone, isObject } from './object'
import { type KubeStatusError, kubeStatus } from './status'

/** More operations than this is a 413 on a real server too. */
const MAX_JSON_PATCH_OPS = 10000

/** Keys that would reach an object's prototype instead of creating a field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** Library errors about a well-formed operation meeting a document it cannot apply to. */
const CANNOT_APPLY = new Set([
  'OPERATION_PATH_UNRESOLVABLE',
  'OPERATION_FROM_UNRESOLVABLE',
  'OPERATION_PATH_CANNOT_ADD',
  'OPERATION_VALUE_OUT_OF_BOUNDS',
  'OPERATION_PATH_ILLEGAL_ARRAY_INDEX',
  'TEST_OPERATION_FAILED',
])

export type Invalid = (message: string) => KubeStatusError

/** Refuses a patch key that would reach an object's prototype (400). */
export function checkPatchKey(key: string): string {
  if (FORBIDDEN_KEYS.has(key)) throw kubeStatus.badRequest(`the patch uses a reserved key: ${JSON.stringify(key)}`)
  return key
}

/** Applies RFC 6902 operations to a copy of `doc`; `invalid` builds the 422 for operations that cannot apply. */
export function applyJsonPatch(doc: unknown, patch: unknown, invalid: Invalid): unknown {
  if (!Array.isArray(patch)) throw kubeStatus.badRequest('json patch must be an array of operations')
  if (patch.length > MAX_JSON_PATCH_OPS)
    throw kubeStatus.tooLarge(`the allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPS}, got ${patch.length}`)
  for (const op of patch) {
    if (!isObject(op)) throw kubeStatus.badRequest('json patch operation must be an object')
    for (const pointer of [op.path, op.from])
      if (typeof pointer === 'string')
        for (const token of pointer.split('/')) checkPatchKey(token.replaceAll('~1', '/').replaceAll('~0', '~'))
  }
  try {
    return applyPatch(clone(doc), patch as Operation[], true, true, true).newDocument
  } catch (e) {
    if (e instanceof JsonPatchError) {
      const where = typeof e.operation?.path === 'string' ? ` (${e.operation.op} ${e.operation.path})` : ''
      const message = `${e.message.split('\n')[0]}${where}`
      throw CANNOT_APPLY.has(e.name) ? invalid(message) : kubeStatus.badRequest(message)
    }
    throw kubeStatus.badRequest(e instanceof Error ? e.message.split('\n')[0] : 'invalid json patch')
  }
}

/** The RFC 6902 operations that turn `from` into `to` (no `test` operations). */
export function jsonPatchDiff(from: object, to: object): Operation[] {
  return compare(from, to)
}

/** RFC 7386: objects merge recursively, `null` deletes, everything else (lists too) replaces. */
export function mergePatch(doc: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch)
  const out: Record<string, unknown> = isObject(doc) ? clone(doc) : {}
  for (const [k, v] of Object.entries(patch)) {
    checkPatchKey(k)
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}
