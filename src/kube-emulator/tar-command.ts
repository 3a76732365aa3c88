/**
 * `tar` in the emulated containers, enough for `kubectl cp` both ways (`tar cf - /path` out of the
 * pod, `tar -xmf - -C /dir` into it): create (`c`), extract (`x`) and list (`t`), the archive on
 * stdin/stdout (`f -`) or in the container's filesystem, `-C`, `-v`, `-m`, `-z`, `--no-same-permissions`,
 * `--no-same-owner`; modes and modification times kept. modern-tar reads and writes the archives
 * (ustar, with PAX and GNU long names), so what Go's archive/tar writes, this reads.
 */
import { gunzipSync, gzipSync } from 'node:zlib'
import { packTar, type TarEntry, unpackTar } from 'modern-tar'
import { type Builtin, type Io, readAll } from './command-io'
import { FsError, type FsNode, MAX_CONTAINER_BYTES, resolvePath } from './filesystem'

interface TarOptions {
  mode?: 'c' | 'x' | 't'
  file?: string
  dir: string
  verbose: boolean
  gzip: boolean
  /** `-m`: extracted files get the current time rather than the archive's. */
  touch: boolean
  /** Extracted modes lose the group and other write bits, as for a non-root user. */
  noSamePermissions: boolean
  operands: string[]
}

const LONG_OPTIONS: Record<string, (o: TarOptions) => void> = {
  create: (o) => void (o.mode = 'c'),
  extract: (o) => void (o.mode = 'x'),
  get: (o) => void (o.mode = 'x'),
  list: (o) => void (o.mode = 't'),
  verbose: (o) => void (o.verbose = true),
  gzip: (o) => void (o.gzip = true),
  touch: (o) => void (o.touch = true),
  'no-same-permissions': (o) => void (o.noSamePermissions = true),
  'same-permissions': (o) => void (o.noSamePermissions = false),
  'preserve-permissions': (o) => void (o.noSamePermissions = false),
  'no-same-owner': () => {},
  'same-owner': () => {},
}

/** GNU tar's argument forms: a first word of bundled letters (`cf`), `-xmf -`, `--long[=value]`; `f` and `C` take the next word. */
function parseArgs(args: string[]): TarOptions | string {
  const o: TarOptions = { dir: '/', verbose: false, gzip: false, touch: false, noSamePermissions: false, operands: [] }
  const queue = [...args]
  const letters = (bundle: string): string | undefined => {
    for (let i = 0; i < bundle.length; i++) {
      const c = bundle[i]
      if (c === 'c' || c === 'x' || c === 't') o.mode = c
      else if (c === 'v') o.verbose = true
      else if (c === 'z') o.gzip = true
      else if (c === 'm') o.touch = true
      else if (c === 'p') o.noSamePermissions = false
      else if (c === 'o') continue
      else if (c === 'f' || c === 'C') {
        // `-fARCHIVE` takes the rest of the bundle; `-f ARCHIVE` the next word.
        const value = i + 1 < bundle.length && bundle[0] === '-' ? bundle.slice(i + 1) : queue.shift()
        if (value === undefined) return `option requires an argument -- '${c}'`
        if (c === 'f') o.file = value
        else o.dir = value
        if (i + 1 < bundle.length && bundle[0] === '-') return undefined
      } else if (c !== '-') return `invalid option -- '${c}'`
    }
    return undefined
  }
  if (queue[0] && !queue[0].startsWith('-')) {
    const problem = letters(queue.shift()!)
    if (problem) return problem
  }
  while (queue.length) {
    const a = queue.shift()!
    if (a.startsWith('--')) {
      const [name, value] = a.slice(2).split(/=(.*)/s)
      if (name === 'file' || name === 'directory') {
        const v = value ?? queue.shift()
        if (v === undefined) return `option '--${name}' requires an argument`
        if (name === 'file') o.file = v
        else o.dir = v
      } else if (LONG_OPTIONS[name]) LONG_OPTIONS[name](o)
      else if (!name.startsWith('warning')) return `unrecognized option '${a}'`
    } else if (a.startsWith('-') && a.length > 1) {
      const problem = letters(a)
      if (problem) return problem
    } else o.operands.push(a)
  }
  if (!o.mode) return "You must specify one of the '-Acdtrux', '--delete' or '--test-label' options"
  return o
}

/** A member name as archived: no leading `/`, no empty or `.` segments. */
const memberName = (path: string) =>
  path
    .split('/')
    .filter((s) => s && s !== '.')
    .join('/')

function headerOf(name: string, node: FsNode): TarEntry {
  const common = { mode: node.mode, mtime: new Date(node.mtime), uid: 0, gid: 0, uname: 'root', gname: 'root' }
  if (node.kind === 'dir') return { header: { ...common, name: `${name}/`, type: 'directory', size: 0 } }
  if (node.kind === 'symlink') return { header: { ...common, name, type: 'symlink', size: 0, linkname: node.target } }
  return { header: { ...common, name, type: 'file', size: node.data.length }, body: node.data }
}

/** The node and its descendants (sorted by name) as tar entries under `name`. */
function collect(name: string, node: FsNode, into: TarEntry[]): void {
  into.push(headerOf(name, node))
  if (node.kind !== 'dir') return
  for (const child of [...node.children.keys()].sort()) collect(`${name}/${child}`, node.children.get(child)!, into)
}

async function create(o: TarOptions, io: Io): Promise<number> {
  if (!o.operands.length) {
    io.err('tar: Cowardly refusing to create an empty archive\n')
    return 2
  }
  const entries: TarEntry[] = []
  let failed = false
  let warned = false
  for (const operand of o.operands) {
    const node = io.fs.lookup(resolvePath(operand, o.dir))
    if (!node) {
      io.err(`tar: ${operand}: Cannot stat: No such file or directory\n`)
      failed = true
      continue
    }
    if (operand.startsWith('/') && !warned) {
      io.err("tar: Removing leading `/' from member names\n")
      warned = true
    }
    collect(memberName(operand), node, entries)
  }
  let archive: Uint8Array = await packTar(entries)
  if (o.gzip) archive = gzipSync(archive)
  const written = writeArchive(o, archive, io)
  if (written) failed = true
  // Verbose names go to stderr when the archive itself is on stdout.
  if (o.verbose) (o.file === '-' || !o.file ? io.err : io.out)(entries.map((e) => `${e.header.name}\n`).join(''))
  if (failed) io.err('tar: Exiting with failure status due to previous errors\n')
  return failed ? 2 : 0
}

/** Writes the archive to stdout or its file; true when that failed. */
function writeArchive(o: TarOptions, archive: Uint8Array, io: Io): boolean {
  if (!o.file || o.file === '-') {
    io.out(archive)
    return false
  }
  try {
    io.fs.writeFile(resolvePath(o.file), archive)
    return false
  } catch (e) {
    io.err(`tar: ${o.file}: Cannot open: ${e instanceof FsError ? e.message : String(e)}\n`)
    return true
  }
}

/** The archive from stdin or its file, un-gzipped; a message when it cannot be had. */
async function readArchive(o: TarOptions, io: Io): Promise<Uint8Array | string> {
  let data: Uint8Array | undefined
  if (!o.file || o.file === '-') data = await readAll(io.stdin, MAX_CONTAINER_BYTES * 2)
  else {
    try {
      data = io.fs.readFile(resolvePath(o.file))
    } catch (e) {
      return `${o.file}: Cannot open: ${e instanceof FsError ? e.message : String(e)}`
    }
  }
  if (!data) return 'write error: No space left on device'
  if (!o.gzip) return data
  try {
    return gunzipSync(data, { maxOutputLength: MAX_CONTAINER_BYTES * 2 })
  } catch {
    return 'Child returned status 1: the archive is not gzip data or too large'
  }
}

async function extractOrList(o: TarOptions, io: Io): Promise<number> {
  const data = await readArchive(o, io)
  if (typeof data === 'string') {
    io.err(`tar: ${data}\n`)
    return 2
  }
  let entries: Awaited<ReturnType<typeof unpackTar>>
  try {
    entries = data.length ? await unpackTar(data, { strict: true }) : []
  } catch {
    io.err('tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n')
    return 2
  }
  const wanted = o.operands.map(memberName)
  const chosen = entries.filter(({ header }) => {
    const name = memberName(header.name)
    return !wanted.length || wanted.some((w) => name === w || name.startsWith(`${w}/`))
  })
  if (o.mode === 't') {
    io.out(chosen.map(({ header }) => `${header.name}\n`).join(''))
    return 0
  }
  const base = io.fs.lookup(resolvePath(o.dir))
  if (base?.kind !== 'dir') {
    io.err(`tar: ${o.dir}: Cannot open: ${base ? 'Not a directory' : 'No such file or directory'}\n`)
    return 2
  }
  let failed = false
  for (const entry of chosen) {
    const problem = extractOne(entry, o, io)
    if (problem) {
      io.err(`tar: ${entry.header.name}: ${problem}\n`)
      failed = true
    } else if (o.verbose) io.out(`${entry.header.name}\n`)
  }
  if (failed) io.err('tar: Exiting with failure status due to previous errors\n')
  return failed ? 2 : 0
}

/** Writes one member into the filesystem; a message when it could not be. */
function extractOne({ header, data }: Awaited<ReturnType<typeof unpackTar>>[number], o: TarOptions, io: Io): string | undefined {
  const name = memberName(header.name)
  if (name.split('/').includes('..')) return "Member name contains '..'"
  if (!name) return undefined
  const target = resolvePath(name, o.dir)
  const fallback = header.type === 'directory' ? 0o755 : 0o644
  const mode = (header.mode ?? fallback) & (o.noSamePermissions ? ~0o022 : 0o7777)
  const mtime = o.touch || !header.mtime ? Date.now() : header.mtime.getTime()
  try {
    const parent = resolvePath(`${target}/..`)
    if (!io.fs.lookup(parent)) io.fs.mkdirs(parent)
    if (header.type === 'directory') io.fs.mkdirs(target, mode, mtime)
    else if (header.type === 'symlink') io.fs.symlink(target, header.linkname ?? '', mtime)
    else if (header.type === 'link')
      io.fs.writeFile(target, io.fs.readFile(resolvePath(memberName(header.linkname ?? ''), o.dir)), mode, mtime)
    else if (header.type === 'file' || header.type === undefined) io.fs.writeFile(target, data ?? new Uint8Array(0), mode, mtime)
    else return 'Cannot create: special files are not supported in this container'
  } catch (e) {
    return `Cannot open: ${e instanceof FsError ? e.message : String(e)}`
  }
  return undefined
}

export const tar: Builtin = async (args, io) => {
  const o = parseArgs(args)
  if (typeof o === 'string') {
    io.err(`tar: ${o}\nTry 'tar --help' for more information.\n`)
    return 2
  }
  return o.mode === 'c' ? create(o, io) : extractOrList(o, io)
}
