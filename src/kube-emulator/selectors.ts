/**
 * Label and field selectors, parsed by hand-written linear scanners (no user-supplied regex).
 * Grammar follows apimachinery's `labels.Parse` and `fields.ParseSelector`.
 */
import { kubeStatus } from '../kube'

type LabelOp = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<'
export interface LabelRequirement {
  key: string
  op: LabelOp
  values: string[]
}
export interface FieldRequirement {
  field: string
  op: '=' | '!='
  value: string
}

const isKeyChar = (c: string) =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '-' || c === '_' || c === '.' || c === '/'

class Scanner {
  pos = 0
  constructor(readonly text: string) {}
  skipSpace() {
    while (this.pos < this.text.length && this.text[this.pos] === ' ') this.pos++
  }
  done() {
    this.skipSpace()
    return this.pos >= this.text.length
  }
  peek(s: string) {
    this.skipSpace()
    return this.text.startsWith(s, this.pos)
  }
  take(s: string) {
    if (!this.peek(s)) return false
    this.pos += s.length
    return true
  }
  word(): string {
    this.skipSpace()
    const start = this.pos
    while (this.pos < this.text.length && isKeyChar(this.text[this.pos])) this.pos++
    return this.text.slice(start, this.pos)
  }
  /** A keyword must be followed by a non-key character, so `innie` is a key, not `in`. */
  keyword(k: string) {
    this.skipSpace()
    if (!this.text.startsWith(k, this.pos)) return false
    const next = this.text[this.pos + k.length]
    if (next !== undefined && isKeyChar(next)) return false
    this.pos += k.length
    return true
  }
}

const labelError = (text: string, why: string) => kubeStatus.badRequest(`unable to parse requirement: ${why} (in selector "${text}")`)

const isInteger = (v: string) => v.trim() !== '' && Number.isInteger(Number(v))

function validLabelValue(v: string): boolean {
  if (v.length > 63) return false
  for (const c of v) if (!isKeyChar(c) || c === '/') return false
  return true
}

function validLabelKey(k: string): boolean {
  if (!k || k.length > 316) return false
  const slash = k.indexOf('/')
  const name = slash >= 0 ? k.slice(slash + 1) : k
  if (slash >= 0 && (slash === 0 || k.indexOf('/', slash + 1) >= 0)) return false
  return name.length > 0 && name.length <= 63
}

function parseValueSet(s: Scanner, text: string): string[] {
  if (!s.take('(')) throw labelError(text, "found '', expected: '('")
  const values: string[] = []
  for (;;) {
    const v = s.word()
    if (!validLabelValue(v)) throw labelError(text, `invalid label value: "${v}"`)
    if (v) values.push(v)
    if (s.take(')')) break
    if (!s.take(',')) throw labelError(text, "found unexpected token, expected: ',' or ')'")
    if (!v) throw labelError(text, "found ',', expected: identifier")
  }
  if (!values.length) throw labelError(text, "for 'in', 'notin' operators, values set can't be empty")
  return values
}

function parseLabelRequirement(s: Scanner, text: string): LabelRequirement {
  if (s.take('!')) {
    const key = s.word()
    if (!validLabelKey(key)) throw labelError(text, `invalid label key "${key}"`)
    return { key, op: '!', values: [] }
  }
  const key = s.word()
  if (!validLabelKey(key)) throw labelError(text, `invalid label key "${key}"`)
  if (s.done() || s.peek(',')) return { key, op: 'exists', values: [] }
  let op: LabelOp
  if (s.take('==') || s.take('=')) op = '='
  else if (s.take('!=')) op = '!='
  else if (s.take('>')) op = '>'
  else if (s.take('<')) op = '<'
  else if (s.keyword('notin')) op = 'notin'
  else if (s.keyword('in')) op = 'in'
  else throw labelError(text, `found '${s.text.slice(s.pos, s.pos + 1)}', expected: in, notin, =, ==, !=, gt, lt`)
  if (op === 'in' || op === 'notin') return { key, op, values: parseValueSet(s, text) }
  const value = s.word()
  if (!validLabelValue(value)) throw labelError(text, `invalid label value: "${value}"`)
  if ((op === '>' || op === '<') && !isInteger(value)) throw labelError(text, `for 'Gt', 'Lt' operators, the value must be an integer`)
  return { key, op, values: [value] }
}

/** Parses a `labelSelector`; throws a 400 Status on any syntax error. Empty text selects all. */
export function parseLabelSelector(text: string): LabelRequirement[] {
  const s = new Scanner(text)
  const out: LabelRequirement[] = []
  if (s.done()) return out
  for (;;) {
    out.push(parseLabelRequirement(s, text))
    if (s.done()) return out
    if (!s.take(',')) throw labelError(text, `found '${s.text.slice(s.pos, s.pos + 1)}', expected: ',' or 'end of string'`)
  }
}

/** Whether `labels` satisfy every requirement; `!=` and `notin` match objects lacking the key. */
export function matchesLabels(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {}
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key)
    const v = l[r.key]
    switch (r.op) {
      case '=':
        return has && v === r.values[0]
      case '!=':
        return !has || v !== r.values[0]
      case 'in':
        return has && r.values.includes(v)
      case 'notin':
        return !has || !r.values.includes(v)
      case 'exists':
        return has
      case '!':
        return !has
      case '>':
        return has && Number(v) > Number(r.values[0])
      case '<':
        return has && Number(v) < Number(r.values[0])
      default:
        return false
    }
  })
}

/** Renders requirements back to selector text, e.g. for a Scale's `status.selector`. */
export function formatLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',')
}

/** Reads one field-selector term, honouring `\` escapes of `\`, `,` and `=`. */
function readEscaped(text: string, start: number, stopAtOperator: boolean): [string, number] {
  let out = ''
  let i = start
  while (i < text.length) {
    const c = text[i]
    if (c === '\\' && i + 1 < text.length) {
      out += text[i + 1]
      i += 2
      continue
    }
    if (c === ',') break
    if (stopAtOperator && (c === '=' || (c === '!' && text[i + 1] === '='))) break
    out += c
    i++
  }
  return [out, i]
}

/** Parses a `fieldSelector` (`=`, `==`, `!=`, comma = AND); throws 400 on bad syntax. */
export function parseFieldSelector(text: string): FieldRequirement[] {
  const out: FieldRequirement[] = []
  let i = 0
  while (i < text.length) {
    const [field, afterField] = readEscaped(text, i, true)
    let op: '=' | '!='
    let j = afterField
    if (text.startsWith('!=', j)) {
      op = '!='
      j += 2
    } else if (text.startsWith('==', j)) {
      op = '='
      j += 2
    } else if (text[j] === '=') {
      op = '='
      j += 1
    } else throw kubeStatus.badRequest(`invalid selector: '${text}'; can't understand '${text.slice(i, afterField)}'`)
    const [value, afterValue] = readEscaped(text, j, false)
    if (!field.trim()) throw kubeStatus.badRequest(`invalid selector: '${text}'; field name must not be empty`)
    out.push({ field: field.trim(), op, value })
    i = afterValue < text.length ? afterValue + 1 : afterValue
  }
  return out
}

/** Whether the object's field values (from its resource's field getters) satisfy every requirement. */
export function matchesFields(reqs: FieldRequirement[], fieldValue: (field: string) => string): boolean {
  return reqs.every((r) => (r.op === '=' ? fieldValue(r.field) === r.value : fieldValue(r.field) !== r.value))
}
