import fastJsonPatch, { type Operation } from 'fast-json-patch'
import { BoundedCache } from '../bounded-cache'
import { AppError } from '../errors'
import { type ChartArchive, parseYamlSafely, UnsafeArchive } from './charts/archive'
import type { LoadedChart } from './charts/client'

/**
 * The values of one package (docs/decisions.md §4a): `valuesPatch` (RFC 6902) applied to the chart's
 * defaults (or to the chart file `valuesFile` names), or `values` merged over the defaults.
 * Without either the chart renders with its defaults alone, exactly as bare `helm template`.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }
type JsonObject = { [key: string]: JsonValue }

export interface ValuesInput {
  valuesFile?: string
  valuesPatch?: { op: string; path: string; value?: unknown; from?: string }[]
  values?: Record<string, unknown>
}

export const Messages = {
  noValuesFile: (file: string) => `the chart has no values file "${file}"`,
  badPatch: (reason: string) => `valuesPatch does not apply to the chart's values: ${reason}`,
  newlineInSet: (key: string) => `the value of "${key}" has a line break, which a helm --set flag cannot carry`,
} as const

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v)

/** A parsed values file weighs this many times its YAML text (measured 2.9×, rounded up). */
export const VALUES_WEIGHT = 4

/** Parsed values files of charts by digest, kept up to a bound in bytes, so a render does not parse the same values.yaml again. */
export class ValuesFiles {
  readonly parsed: BoundedCache<JsonObject>

  constructor(maxBytes: number) {
    this.parsed = new BoundedCache(maxBytes)
  }

  /** A values file of the chart as an object ({} when empty), a copy the caller may change; throws invalid when it is missing or not a mapping. */
  of(chart: LoadedChart, file = 'values.yaml'): JsonObject {
    const key = `${chart.pin.digest}\u0000${file}`
    const known = this.parsed.get(key)
    if (known) return structuredClone(known)
    const values = parseValuesFile(chart.archive, file)
    this.parsed.set(key, values, (chart.archive.files.get(file)?.byteLength ?? 0) * VALUES_WEIGHT)
    return structuredClone(values)
  }
}

function parseValuesFile(archive: ChartArchive, file: string): JsonObject {
  const bytes = archive.files.get(file)
  if (!bytes) {
    if (file === 'values.yaml') return {}
    throw new AppError('invalid', Messages.noValuesFile(file))
  }
  let parsed: unknown
  try {
    parsed = parseYamlSafely(bytes, file)
  } catch (error) {
    if (error instanceof UnsafeArchive) throw new AppError('invalid', error.message)
    throw error
  }
  if (parsed === null || parsed === undefined) return {}
  if (!isObject(parsed)) throw new AppError('invalid', `the chart's ${file} is not a mapping`)
  return JSON.parse(JSON.stringify(parsed)) as JsonObject
}

/** `over` merged into `base`: mappings merge key by key, anything else replaces. */
function merge(base: JsonObject, over: Record<string, unknown>): JsonObject {
  const out: JsonObject = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key]
    out[key] = isObject(prior) && isObject(value) ? merge(prior, value) : (value as JsonValue)
  }
  return out
}

function applyPatch(document: JsonObject, patch: NonNullable<ValuesInput['valuesPatch']>): JsonObject {
  try {
    const result = fastJsonPatch.applyPatch(document, patch as Operation[], true, false).newDocument
    if (!isObject(result)) throw new AppError('invalid', Messages.badPatch('the result is not a mapping'))
    return result
  } catch (error) {
    if (error instanceof AppError) throw error
    throw new AppError('invalid', Messages.badPatch((error as Error).message.split('\n')[0] ?? 'invalid patch'))
  }
}

/** The user values handed to `helm template`, or undefined for the chart's defaults alone. */
export function renderValues(files: ValuesFiles, chart: LoadedChart, input: ValuesInput): JsonObject | undefined {
  if (input.valuesPatch) return applyPatch(files.of(chart, input.valuesFile || 'values.yaml'), input.valuesPatch)
  if (input.values) return merge(files.of(chart), input.values)
  return undefined
}

/** The values the helm3 script installs with: `valuesFile` (default values.yaml), patched or merged over. */
export function scriptValues(files: ValuesFiles, chart: LoadedChart, input: ValuesInput): JsonObject {
  const base = files.of(chart, input.valuesFile || 'values.yaml')
  if (input.valuesPatch) return applyPatch(base, input.valuesPatch)
  return input.values ? merge(base, input.values) : base
}

const escapeKey = (key: string) => key.replace(/\./g, '\\.')
const isScalar = (v: JsonValue | undefined) => v === null || typeof v !== 'object'

function scalarText(key: string, value: JsonValue): string {
  const text = value === null ? 'null' : String(value)
  if (/[\r\n]/.test(text)) throw new AppError('invalid', Messages.newlineInSet(key))
  return text.replace(/,/g, '\\,')
}

function diffInto(key: string, before: JsonValue | undefined, after: JsonValue | undefined, out: string[]): void {
  if (after === undefined) {
    out.push(`${key}=null`)
    return
  }
  if (isObject(after)) {
    const prior = isObject(before) ? before : {}
    const keys = new Set([...Object.keys(prior), ...Object.keys(after)])
    for (const k of keys) diffInto(key ? `${key}.${escapeKey(k)}` : escapeKey(k), prior[k], after[k], out)
    return
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return
  if (Array.isArray(after)) {
    if (after.length === 0) out.push(`${key}=null`)
    else if (after.every(isScalar)) out.push(`${key}={${after.map((v) => scalarText(key, v)).join(', ')}}`)
    else for (const [i, item] of after.entries()) diffInto(`${key}[${i}]`, Array.isArray(before) ? before[i] : undefined, item, out)
    return
  }
  out.push(`${key}=${scalarText(key, after)}`)
}

/**
 * The `--set` arguments that turn the chart's values.yaml into `values` (reference §1.3): one
 * per changed leaf, sorted; removed keys and empty lists are `null`. Throws invalid for a value
 * with a line break.
 */
export function setFlagsOf(defaults: JsonObject, values: JsonObject): string[] {
  const out: string[] = []
  diffInto('', defaults, values, out)
  return out.sort()
}
