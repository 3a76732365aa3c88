import fastJsonPatch, { type Operation } from 'fast-json-patch'
import { BoundedCache } from '../bounded-cache'
import { AppError } from '../errors'
import { type ChartArchive, parseYamlSafely, UnsafeArchive } from './charts/archive'
import type { LoadedChart } from './charts/client'
import type { ValuesFlag } from './render/scripts'

/**
 * The values of one package (docs/decisions.md §4a): `valuesPatch` (RFC 6902) applied to the chart's
 * defaults (or to the chart file `valuesFile` names), or `values` merged over the defaults.
 * Without either the chart renders with its defaults alone, exactly as bare `helm template`.
 */

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }
type JsonObject = { [key: string]: JsonValue }

export interface ValuesInput {
  valuesFile?: string
  valuesPatch?: { op: string; path: string; value?: unknown; from?: string }[]
  values?: Record<string, unknown>
}

export const Messages = {
  noValuesFile: (file: string) => `the chart has no values file "${file}"`,
  badPatch: (reason: string) => `valuesPatch does not apply to the chart's values: ${reason}`,
  unnamableKey: (parent: string) =>
    `values${parent ? ` under "${parent}"` : ''} have an empty key or one with a NUL character, which helm's --set flags cannot name`,
} as const

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v)

/** A parsed values file weighs this many times its YAML text (measured 2.9×, rounded up). */
const VALUES_WEIGHT = 4

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

// Helm's --set parser (strvals) ends a key at = [ , . and a value at , (a leading { starts a list); a backslash takes the next character literally.
const escapeKey = (key: string) => key.replace(/[\\.[\],=]/g, '\\$&')
const escapeValue = (text: string) => text.replace(/[\\,]/g, '\\$&').replace(/^\{/, '\\{')

/** The flag's key for `path`; throws invalid for a key no command-line argument can name (empty, or with a NUL). */
function keyOf(path: string[]): string {
  for (const [i, key] of path.entries())
    if (key === '' || key.includes('\0')) throw new AppError('invalid', Messages.unnamableKey(path.slice(0, i).join('.')))
  return path.map(escapeKey).join('.')
}

/** Whether --set reads `value` back as itself: it types true/false/null and integers, and keeps other text a string. */
function setKeepsAsIs(value: JsonValue): value is null | boolean | number | string {
  if (value === null || typeof value === 'boolean') return true
  if (typeof value === 'number') return Number.isSafeInteger(value)
  if (typeof value !== 'string') return false
  return !/^(true|false|null)$/i.test(value) && value !== '0' && !isInt64Text(value) && !/[\u0000-\u001f]/.test(value)
}

/** Text strvals turns into an int64: not starting with 0, an optional sign, digits, in range. */
function isInt64Text(text: string): boolean {
  if (text.startsWith('0') || !/^[-+]?\d+$/.test(text)) return false
  const n = BigInt(text)
  return n >= -(2n ** 63n) && n < 2n ** 63n
}

function flagOf(path: string[], value: JsonValue): ValuesFlag {
  if (setKeepsAsIs(value)) return { flag: '--set', arg: `${keyOf(path)}=${value === null ? 'null' : escapeValue(String(value))}` }
  return { flag: '--set-json', arg: `${keyOf(path)}=${JSON.stringify(value)}` }
}

function diffInto(path: string[], before: JsonValue | undefined, after: JsonValue | undefined, out: ValuesFlag[]): void {
  if (after === undefined) {
    out.push(flagOf(path, null))
    return
  }
  if (isObject(after) && (isObject(before) || Object.keys(after).length > 0)) {
    const prior = isObject(before) ? before : {}
    for (const k of new Set([...Object.keys(prior), ...Object.keys(after)])) diffInto([...path, k], prior[k], after[k], out)
    return
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) out.push(flagOf(path, after))
}

/**
 * The value flags that turn the chart's values.yaml into `values` (reference §1.3): one per
 * changed leaf (a list as a whole), sorted; removed keys are `null`. Keys and values are escaped
 * for Helm's --set parser, and a value --set would read differently (a string such as "true" or
 * "42", a fraction, a control character, a list) goes as --set-json. Throws invalid for a changed
 * key that is empty or holds a NUL.
 */
export function setFlagsOf(defaults: JsonObject, values: JsonObject): ValuesFlag[] {
  const out: ValuesFlag[] = []
  diffInto([], defaults, values, out)
  return out.sort((a, b) => (a.arg < b.arg ? -1 : a.arg > b.arg ? 1 : 0))
}
