/**
 * Requests made from the OpenAPI document, mostly wrong: the fuzz pass (test/security/fuzz.test.ts)
 * sends them to every operation. Deterministic for a seed, so a failure can be replayed.
 */

type JsonSchema = {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  format?: string
  minimum?: number
}

export interface DocumentOperation {
  method: string
  path: string
  parameters: { name: string; in: string; schema?: JsonSchema }[]
  body?: { mediaTypes: string[]; schema: JsonSchema }
}

export interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Blob | FormData
}

/** mulberry32: a small seeded generator, enough to pick cases reproducibly. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** Values that have broken parsers somewhere: encodings, sizes, types, names of things. */
const HOSTILE_STRINGS = [
  '',
  ' ',
  '%ff%fe',
  '%00',
  '%',
  '%2e%2e',
  '..',
  '../../etc/passwd',
  'a'.repeat(5000),
  '-1',
  '0',
  '99999999999999999999999',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '\u0000',
  '\ud800',
  '😀',
  'İ',
  'x\r\nSet-Cookie: a=b',
  'http://169.254.169.254/latest/meta-data/',
  'file:///etc/passwd',
  '2025-02-30',
  '0000-01-01T00:00:00Z',
]

const HOSTILE_VALUES: unknown[] = [
  null,
  -1,
  0,
  1.5,
  2 ** 53 + 1,
  -(2 ** 63),
  true,
  [],
  {},
  [null],
  { $ref: '#/x' },
  'a'.repeat(70_000),
  { __proto__: { admin: true } },
  { constructor: { prototype: { admin: true } } },
]

/** encodeURIComponent, and for a lone surrogate the bytes a careless client would send for it. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return '%ED%A0%80'
  }
}

export class RequestMaker {
  constructor(
    private readonly random: () => number,
    private readonly schemas: Record<string, JsonSchema>,
    /** Plausible values for path parameters by name (an existing user, org, cluster…). */
    private readonly known: Record<string, string>,
  ) {}

  private pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.random() * values.length)]
  }

  private chance(p: number): boolean {
    return this.random() < p
  }

  private resolve(schema: JsonSchema): JsonSchema {
    let current = schema
    for (let hops = 0; current.$ref && hops < 10; hops++) current = this.schemas[current.$ref.replace('#/components/schemas/', '')] ?? {}
    return current
  }

  /** A value that fits `schema` (roughly: enough to get past validation to the code behind it). */
  sample(schema: JsonSchema, depth = 0): unknown {
    const s = this.resolve(schema)
    if (s.const !== undefined) return s.const
    if (s.enum) return this.pick(s.enum)
    const options = s.anyOf ?? s.oneOf
    if (options) return this.sample(this.pick(options), depth)
    const type = Array.isArray(s.type) ? this.pick(s.type) : s.type
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {}
        for (const [key, value] of Object.entries(s.properties ?? {}))
          if (depth < 6 && ((s.required ?? []).includes(key) || this.chance(0.5))) out[key] = this.sample(value, depth + 1)
        return out
      }
      case 'array':
        return depth < 6 && s.items ? [this.sample(s.items, depth + 1)] : []
      case 'integer':
        return this.pick([1, 2, 42])
      case 'number':
        return 1.5
      case 'boolean':
        return this.chance(0.5)
      case 'string':
        return this.sampleString(s.format)
      default:
        return 'x'
    }
  }

  private sampleString(format: string | undefined): string {
    if (format === 'date-time') return '2026-01-02T03:04:05Z'
    if (format === 'email') return 'someone@example.com'
    if (format === 'uri') return 'https://example.com/x'
    return this.pick(['x', 'alice', 'acme', 'dev', 'default', '1', 'v1'])
  }

  /** `value` with one place in it replaced by a hostile value (or the whole of it). */
  private mutate(value: unknown): unknown {
    if (this.chance(0.2) || value === null || typeof value !== 'object') return this.pick([...HOSTILE_VALUES, ...HOSTILE_STRINGS])
    const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<string, unknown>
    const keys = Object.keys(copy)
    if (keys.length === 0 || this.chance(0.15))
      copy[this.pick(['extra', '__proto__', 'id', 'admin', 'is_admin'])] = this.pick(HOSTILE_VALUES)
    else {
      const key = this.pick(keys)
      copy[key] = this.chance(0.5) ? this.mutate(copy[key]) : this.pick([...HOSTILE_VALUES, ...HOSTILE_STRINGS])
    }
    return copy
  }

  private pathValue(name: string): string {
    const known = this.known[name]
    if (known !== undefined && this.chance(0.6)) return known
    const hostile = this.pick(HOSTILE_STRINGS)
    // Raw percent sequences are what a hostile client sends; anything else is encoded as a client would.
    return /^%/.test(hostile) ? hostile : encode(hostile)
  }

  private queryOf(op: DocumentOperation): string {
    const pairs: string[] = []
    for (const p of op.parameters.filter((p) => p.in === 'query')) {
      if (this.chance(0.4)) continue
      const value = this.chance(0.5) && p.schema ? String(this.sample(p.schema)) : this.pick(HOSTILE_STRINGS)
      pairs.push(`${encode(p.name)}=${this.chance(0.1) ? '%ff' : encode(value)}`)
    }
    if (this.chance(0.2))
      pairs.push(`${this.pick(['sudo', 'page', 'limit', 'token', 'filter', 'q'])}=${encode(this.pick(HOSTILE_STRINGS))}`)
    return pairs.length ? `?${pairs.join('&')}` : ''
  }

  private bodyOf(op: DocumentOperation, headers: Record<string, string>): FuzzRequest['body'] {
    if (!op.body && this.chance(0.8)) return undefined
    const schema = op.body?.schema ?? { type: 'object' }
    const mediaType = op.body ? this.pick(op.body.mediaTypes) : 'application/json'
    const value = this.chance(0.25) ? this.sample(schema) : this.mutate(this.sample(schema))
    const shape = this.random()
    if (shape < 0.05) {
      headers['content-type'] = 'application/json'
      return new Blob([new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])]) // {"\xff\xfe":1}: not UTF-8
    }
    if (shape < 0.1) {
      headers['content-type'] = 'application/json'
      return `${'['.repeat(3000)}${']'.repeat(3000)}`
    }
    if (shape < 0.15) {
      headers['content-type'] = this.pick(['text/plain', 'application/xml', 'application/json; charset=latin1', ''])
      return '{"a":'
    }
    if (mediaType === 'multipart/form-data') {
      const form = new FormData()
      for (const [key, field] of Object.entries((value ?? {}) as Record<string, unknown>))
        form.append(
          key,
          typeof field === 'string' ? field : this.chance(0.5) ? new Blob([this.pick(HOSTILE_STRINGS)]) : JSON.stringify(field),
        )
      return form
    }
    if (mediaType === 'application/x-www-form-urlencoded') {
      headers['content-type'] = mediaType
      return Object.entries((value ?? {}) as Record<string, unknown>)
        .map(([k, v]) => `${encode(k)}=${encode(typeof v === 'string' ? v : JSON.stringify(v))}`)
        .join('&')
    }
    headers['content-type'] = mediaType
    return JSON.stringify(value)
  }

  /** One request for `op`, with `credential` (or none) and mostly wrong parts. */
  make(op: DocumentOperation, credential: Record<string, string>): FuzzRequest {
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => this.pathValue(name))
    const headers: Record<string, string> = { ...credential }
    if (this.chance(0.05)) headers['if-none-match'] = this.pick(HOSTILE_STRINGS.slice(0, 8))
    if (this.chance(0.05)) headers.sudo = this.pick(['admin', 'nobody', '%ff'])
    const method = op.method.toUpperCase()
    // fetch sends no body with GET or HEAD; the server's answer to one is Bun's to give.
    const body = method === 'GET' || method === 'HEAD' ? undefined : this.bodyOf(op, headers)
    return { method, path: `${path}${this.queryOf(op)}`, headers, body }
  }
}

/** The document's operations as the fuzzer needs them. */
export function operationsOf(doc: {
  paths: Record<
    string,
    Record<string, { parameters?: DocumentOperation['parameters']; requestBody?: { content?: Record<string, { schema: JsonSchema }> } }>
  >
}): DocumentOperation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const content = op.requestBody?.content ?? {}
      const mediaTypes = Object.keys(content)
      return {
        method,
        path,
        parameters: op.parameters ?? [],
        body: mediaTypes.length ? { mediaTypes, schema: content[mediaTypes[0]].schema } : undefined,
      }
    }),
  )
}
