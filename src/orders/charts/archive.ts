import { gunzipSync } from 'node:zlib'
import { parse as parseYaml } from 'yaml'

/**
 * Safe, in-memory reading of a chart archive (a gzipped tar whose one top directory is the chart
 * name), subchart archives (`charts/<name>.tgz`) included. Nothing here touches the disk: the
 * chart client proves an archive harmless with this reading and hands Helm a re-packing of
 * exactly what was read (pack.ts), never the original bytes, so both see the same files.
 */

export interface ArchiveLimits {
  /** Largest compressed archive accepted, in bytes. */
  maxArchiveBytes: number
  /** Largest total of the expanded tar stream (Helm's own default is 100 MiB). */
  maxExpandedBytes: number
  /** Largest single file (Helm's own default is 5 MiB). */
  maxFileBytes: number
  /** Most entries an archive may hold. */
  maxEntries: number
}

/** How deep subchart archives may nest inside each other. */
const MAX_NESTING = 8

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxArchiveBytes: 20 * 1024 * 1024,
  maxExpandedBytes: 100 * 1024 * 1024,
  maxFileBytes: 5 * 1024 * 1024,
  maxEntries: 10_000,
}

/** Why an archive was refused; the message names the offending entry, never the archive bytes. */
export class UnsafeArchive extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnsafeArchive'
  }
}

export interface ChartArchive {
  /** The top directory: the chart's name as packaged. */
  root: string
  /** File contents by path below the top directory (`Chart.yaml`, `templates/x.yaml`, ...), subchart archives aside. */
  files: Map<string, Uint8Array>
  /** The subchart archives Helm would load (`charts/<name>.tgz`, also below subchart directories), read the same way. */
  subcharts: Map<string, ChartArchive>
  /** Bytes this reading keeps in memory (its expanded tar streams, subcharts included): what caches count. */
  bytes: number
}

export interface ChartMetadata {
  name: string
  version: string
  apiVersion?: string
  type?: string
  deprecated?: boolean
  kubeVersion?: string
}

const BLOCK = 512

/** Gunzips with an output cap, so a small bomb cannot expand past what is `left` of `maxExpandedBytes`. */
function gunzipCapped(archive: Uint8Array, limits: ArchiveLimits, left: number): Buffer {
  if (archive.byteLength > limits.maxArchiveBytes)
    throw new UnsafeArchive(`the chart archive is larger than ${limits.maxArchiveBytes} bytes`)
  try {
    return gunzipSync(archive, { maxOutputLength: Math.max(1, left) })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new UnsafeArchive(`the chart archive expands past ${limits.maxExpandedBytes} bytes`)
    throw new UnsafeArchive('the chart archive is not a valid gzip stream')
  }
}

function readString(block: Buffer, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length)
  const end = slice.indexOf(0)
  return slice.subarray(0, end === -1 ? length : end).toString('utf8')
}

function readOctal(block: Buffer, offset: number, length: number): number {
  const text = readString(block, offset, length).trim()
  if (text === '') return 0
  if (!/^[0-7]+$/.test(text)) throw new UnsafeArchive('the chart archive has a malformed tar header')
  return parseInt(text, 8)
}

/** The records of a PAX extended header that decide where the next entry is: its path and its size. */
function paxRecords(data: Buffer): { path?: string; size?: number } {
  const found: { path?: string; size?: number } = {}
  let at = 0
  while (at < data.length) {
    const space = data.indexOf(0x20, at)
    if (space === -1) break
    const length = Number(data.subarray(at, space).toString('ascii'))
    if (!Number.isInteger(length) || length <= 0 || at + length > data.length)
      throw new UnsafeArchive('the chart archive has a malformed PAX header')
    const record = data.subarray(space + 1, at + length - 1).toString('utf8')
    const eq = record.indexOf('=')
    const [key, value] = [record.slice(0, eq), record.slice(eq + 1)]
    if (key === 'path') found.path = value
    // The size record overrides the header's, as in every tar reader since POSIX.1-2001.
    if (key === 'size') {
      if (!/^\d{1,15}$/.test(value)) throw new UnsafeArchive('the chart archive has a malformed PAX size')
      found.size = Number(value)
    }
    at += length
  }
  return found
}

/** Whether Helm loads `path` as a subchart archive: `charts/<name>.tgz` of the chart or of a subchart directory; Helm skips names starting with _ or . */
function isSubchartArchive(path: string): boolean {
  const parts = path.split('/')
  for (let i = 0; parts[i] === 'charts' && i + 1 < parts.length; i += 2) {
    const name = parts[i + 1]!
    if (/^[_.]/.test(name)) return false
    if (i + 2 === parts.length) return name.endsWith('.tgz')
  }
  return false
}

/** The entry's path from its header: the ustar prefix counts only in the POSIX format (GNU headers keep times there). */
function headerPath(header: Buffer): string {
  const name = readString(header, 0, 100)
  const posix = header.subarray(257, 265).toString('latin1') === 'ustar\u000000'
  const prefix = posix ? readString(header, 345, 155) : ''
  return prefix ? `${prefix}/${name}` : name
}

/**
 * Splits an entry path into its top directory and the rest; refuses absolute paths, `..`
 * segments, backslashes and NUL, so no entry can name anything outside the chart.
 */
function safePath(raw: string): { top: string; rest: string } {
  if (raw.includes('\0') || raw.includes('\\'))
    throw new UnsafeArchive(`the chart archive has an entry with a forbidden character: ${JSON.stringify(raw.slice(0, 200))}`)
  if (raw.startsWith('/')) throw new UnsafeArchive(`the chart archive has an absolute path: ${JSON.stringify(raw.slice(0, 200))}`)
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.')
  if (parts.some((p) => p === '..'))
    throw new UnsafeArchive(`the chart archive has a path leaving the chart: ${JSON.stringify(raw.slice(0, 200))}`)
  const [top = '', ...rest] = parts
  return { top, rest: rest.join('/') }
}

const TYPE_FILE = new Set(['0', '\0', '7'])
const TYPE_DIR = '5'
const TYPE_LINKS = new Set(['1', '2'])
/** Headers about the next entry (PAX, PAX global, GNU long name): their own size is the header's. */
const EXTENSIONS = new Set(['x', 'g', 'L'])

/**
 * Reads a gzipped chart archive in memory, subchart archives too (sharing one expansion budget).
 * Throws UnsafeArchive for a bomb, a link, a device, a path leaving the chart, more than one top
 * directory, or limits exceeded.
 */
export function readChartArchive(archive: Uint8Array, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): ChartArchive {
  return readLevel(archive, limits, { expanded: 0 }, 0)
}

function readLevel(archive: Uint8Array, limits: ArchiveLimits, budget: { expanded: number }, depth: number): ChartArchive {
  if (depth > MAX_NESTING) throw new UnsafeArchive(`the chart archive nests subchart archives more than ${MAX_NESTING} deep`)
  const tar = gunzipCapped(archive, limits, limits.maxExpandedBytes - budget.expanded)
  budget.expanded += tar.length
  const files = new Map<string, Uint8Array>()
  const subcharts = new Map<string, ChartArchive>()
  let root: string | undefined
  // What extended headers say of the next entry; a GNU long name wins over a PAX path, as in Go's reader (Helm's).
  let pax: { path?: string; size?: number } = {}
  let longName: string | undefined
  let entries = 0
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK)
    if (header.every((b) => b === 0)) break
    if (++entries > limits.maxEntries) throw new UnsafeArchive(`the chart archive has more than ${limits.maxEntries} entries`)
    const type = String.fromCharCode(header[156]!)
    const size = EXTENSIONS.has(type) ? readOctal(header, 124, 12) : (pax.size ?? readOctal(header, 124, 12))
    const dataStart = at + BLOCK
    if (dataStart + size > tar.length) throw new UnsafeArchive('the chart archive is truncated')
    const data = tar.subarray(dataStart, dataStart + size)
    at = dataStart + Math.ceil(size / BLOCK) * BLOCK
    if (type === 'x') {
      pax = paxRecords(data)
      continue
    }
    if (type === 'L') {
      longName = readString(data, 0, data.length)
      continue
    }
    if (type === 'g') continue
    const raw = longName ?? pax.path ?? headerPath(header)
    pax = {}
    longName = undefined
    if (TYPE_LINKS.has(type))
      throw new UnsafeArchive(`the chart archive has a link, which charts may not contain: ${JSON.stringify(raw.slice(0, 200))}`)
    if (!TYPE_FILE.has(type) && type !== TYPE_DIR)
      throw new UnsafeArchive(`the chart archive has an entry that is neither file nor directory: ${JSON.stringify(raw.slice(0, 200))}`)
    const { top, rest } = safePath(raw)
    if (!top) continue
    if (root !== undefined && top !== root) throw new UnsafeArchive('the chart archive has more than one top directory')
    root = top
    if (type === TYPE_DIR || rest === '') continue
    if (size > limits.maxFileBytes)
      throw new UnsafeArchive(`the chart archive has a file larger than ${limits.maxFileBytes} bytes: ${rest}`)
    if (isSubchartArchive(rest)) subcharts.set(rest, readSubchart(rest, data, limits, budget, depth))
    else files.set(rest, data)
  }
  if (root === undefined || !files.has('Chart.yaml')) throw new UnsafeArchive('the chart archive has no Chart.yaml')
  const bytes = tar.length + [...subcharts.values()].reduce((sum, sub) => sum + sub.bytes, 0)
  return { root, files, subcharts, bytes }
}

function readSubchart(path: string, data: Uint8Array, limits: ArchiveLimits, budget: { expanded: number }, depth: number) {
  try {
    return readLevel(data, limits, budget, depth + 1)
  } catch (error) {
    if (error instanceof UnsafeArchive) throw new UnsafeArchive(`${path}: ${error.message}`)
    throw error
  }
}

/** Chart.yaml of an archive; throws UnsafeArchive when it is not a mapping with a name and version. */
export function chartMetadataOf(archive: ChartArchive): ChartMetadata {
  const parsed = parseYamlSafely(archive.files.get('Chart.yaml')!, 'Chart.yaml')
  const meta = parsed as Partial<Record<keyof ChartMetadata, unknown>> | null
  if (!meta || typeof meta !== 'object' || typeof meta.name !== 'string' || meta.version === undefined)
    throw new UnsafeArchive('the chart archive has a Chart.yaml without name and version')
  return {
    name: meta.name,
    version: String(meta.version),
    apiVersion: typeof meta.apiVersion === 'string' ? meta.apiVersion : undefined,
    type: typeof meta.type === 'string' ? meta.type : undefined,
    deprecated: meta.deprecated === true,
    kubeVersion: typeof meta.kubeVersion === 'string' ? meta.kubeVersion : undefined,
  }
}

/** A YAML file of the chart as data; YAML 1.1 like Helm's parser, so `yes`/`on` are booleans. */
export function parseYamlSafely(bytes: Uint8Array, name: string): unknown {
  try {
    return parseYaml(Buffer.from(bytes).toString('utf8'), { version: '1.1', maxAliasCount: 1000 })
  } catch (error) {
    throw new UnsafeArchive(`the chart's ${name} is not valid YAML: ${(error as Error).message.split('\n')[0]}`)
  }
}
