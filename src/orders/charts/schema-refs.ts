import { type ChartArchive, UnsafeArchive } from './archive'

/**
 * Helm validates values against every values.schema.json of a chart tree while it renders, and its
 * schema library fetches what a reference names: `http(s)://` URLs (loopback too), `file://` paths,
 * and references relative to an `$id` or `id` base. A chart may therefore refer only within its own
 * schema file (`#…`); `$schema` may name only a published JSON Schema draft. Helm also runs without
 * a network (render/helm.ts): this check is what keeps files of the server out of reach, and it
 * answers a clear 422 at order time instead of a failure at render.
 */

/** Keywords whose value is a reference to load: in-file fragments only. */
const REFERENCES = new Set(['$ref', '$dynamicRef', '$recursiveRef'])
const DRAFTS = /^https?:\/\/json-schema\.org\/[\w./-]*#?$/
const UTF8_BOM = '\ufeff'

/** Throws UnsafeArchive naming the file and the reference when a schema in the chart (or a subchart, packed or not) refers outside itself. */
export function checkSchemaReferences(archive: ChartArchive, at = ''): void {
  for (const [path, bytes] of archive.files)
    if (path === 'values.schema.json' || path.endsWith('/values.schema.json')) checkSchema(`${at}${path}`, bytes)
  for (const [path, subchart] of archive.subcharts) checkSchemaReferences(subchart, `${at}${path}/`)
}

function checkSchema(file: string, bytes: Uint8Array): void {
  let schema: unknown
  try {
    // Helm drops a byte-order mark from every file it loads.
    schema = JSON.parse(Buffer.from(bytes).toString('utf8').replace(UTF8_BOM, ''))
  } catch {
    throw new UnsafeArchive(`the chart's ${file} is not valid JSON`)
  }
  const found = outsideReference(schema)
  if (found)
    throw new UnsafeArchive(
      `the chart's ${file} has ${found.keyword} ${JSON.stringify(found.value.slice(0, 200))}: a chart's schema may refer only within its file ("#…")`,
    )
}

/** The first reference that leaves the file, walking every object (also inside data such as `default`: cheap to over-refuse). */
function outsideReference(schema: unknown): { keyword: string; value: string } | undefined {
  const stack: unknown[] = [schema]
  while (stack.length > 0) {
    const node = stack.pop()
    if (!node || typeof node !== 'object') continue
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item)
      continue
    }
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string' && REFERENCES.has(key) && !value.startsWith('#')) return { keyword: key, value }
      if (typeof value === 'string' && key === '$schema' && !DRAFTS.test(value)) return { keyword: key, value }
      stack.push(value)
    }
  }
  return undefined
}
