import { stringify as stringifyYaml } from 'yaml'

/**
 * The resources converter of `render/resources` (reference §1.5): every object of the order
 * manifest, namespaced (`default` when empty, as the original does even for cluster-scoped
 * kinds), sorted by apiVersion and kind, named by key and filename after gobuffalo/flect's case
 * rules, and marshalled as YAML (keys sorted, sequences not indented) or compact JSON.
 */

export type DataFormat = 'yaml' | 'json'

export interface ResourceFile {
  filename: string
  key: string
  data: string
}

// flect's acronym list (the part that occurs in Kubernetes names); these stay upper-case.
const ACRONYMS = new Set([
  'API',
  'ASCII',
  'CPU',
  'CSS',
  'DB',
  'DNS',
  'EOF',
  'GUID',
  'HTML',
  'HTTP',
  'HTTPS',
  'ID',
  'IP',
  'JSON',
  'LHS',
  'QPS',
  'RAM',
  'RHS',
  'RPC',
  'SLA',
  'SMTP',
  'SQL',
  'SSH',
  'TCP',
  'TLS',
  'TTL',
  'UDP',
  'UI',
  'UID',
  'UUID',
  'URI',
  'URL',
  'UTF8',
  'VM',
  'XML',
  'XMPP',
  'XSRF',
  'XSS',
])

/** Words of a name: split at separators, at lower→upper steps and before the last capital of a capital run. */
function wordsOf(text: string): string[] {
  return text.split(/[^A-Za-z0-9]+/).flatMap((part) => part.match(/[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g) ?? [])
}

const capitalize = (word: string) => (ACRONYMS.has(word.toUpperCase()) ? word.toUpperCase() : word.charAt(0).toUpperCase() + word.slice(1))

const pascalize = (text: string) => wordsOf(text).map(capitalize).join('')
const camelize = (text: string) => {
  const p = pascalize(text)
  return p.charAt(0).toLowerCase() + p.slice(1)
}
const underscore = (text: string) =>
  wordsOf(text)
    .map((w) => w.toLowerCase())
    .join('_')

/** `apps` → `Apps`, `rbac.authorization.k8s.io` → `RbacAuthorization`, core → ``. */
function groupPrefix(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  if (slash === -1) return ''
  const group = apiVersion.slice(0, slash).replace(/\.(k8s\.io|kubernetes\.io)$/, '')
  return pascalize(group.replace(/\./g, '_'))
}

export function marshal(value: unknown, format: DataFormat): string {
  return format === 'json' ? JSON.stringify(value) : stringifyYaml(value, { sortMapEntries: true, indentSeq: false, lineWidth: 0 })
}

interface Named {
  object: Record<string, unknown>
  kind: string
  prefix: string
  suffix: string
}

/** The resources of one package; `releaseName` is the prefix stripped from object names. */
export function convertResources(objects: Record<string, unknown>[], releaseName: string, format: DataFormat): ResourceFile[] {
  const named: Named[] = objects.map((source) => {
    const object = structuredClone(source)
    const metadata = (object.metadata ??= {}) as Record<string, unknown>
    if (!metadata.namespace) metadata.namespace = 'default'
    const name = String(metadata.name ?? '')
    const suffix = releaseName && name.startsWith(releaseName) ? name.slice(releaseName.length) : name
    return { object, kind: String(object.kind ?? ''), prefix: groupPrefix(String(object.apiVersion ?? '')), suffix }
  })
  named.sort((a, b) => compare(String(a.object.apiVersion ?? ''), String(b.object.apiVersion ?? '')) || compare(a.kind, b.kind))
  const kindCount = countBy(named, (n) => n.kind)
  const kindSuffixCount = countBy(named, (n) => n.kind + fileSuffix(n.suffix))
  return named.map((n) => {
    const keySuffix = underscore(n.suffix).replace(/^_+|_+$/g, '')
    const key = camelize(n.prefix + n.kind) + (keySuffix ? `_${keySuffix}` : '')
    const filename =
      kindCount.get(n.kind) === 1
        ? underscore(n.kind)
        : kindSuffixCount.get(n.kind + fileSuffix(n.suffix)) === 1
          ? underscore(n.kind + fileSuffix(n.suffix))
          : underscore(n.prefix + n.kind + fileSuffix(n.suffix))
    return { filename, key, data: marshal(n.object, format) }
  })
}

const fileSuffix = (suffix: string) => pascalize(suffix.replace(/\./g, '-').replace(/^-+|-+$/g, ''))
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}
