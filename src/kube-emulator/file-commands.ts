/**
 * The file commands of the emulated containers over their in-memory filesystem (filesystem.ts):
 * `cat`, `ls`, `mkdir`, `rm`, `chmod` and `test` / `[`, with busybox's options and messages.
 */
import type { Builtin, Io } from './command-io'
import { FsError, type FsNode, resolvePath } from './filesystem'

/** `rwxr-x---` and the type letter, as `ls -l` prints a mode. */
function modeString(node: FsNode): string {
  const type = node.kind === 'dir' ? 'd' : node.kind === 'symlink' ? 'l' : '-'
  const bits = 'rwxrwxrwx'
  let out = type
  for (let i = 0; i < 9; i++) out += node.mode & (1 << (8 - i)) ? bits[i] : '-'
  return out
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

function longEntry(name: string, node: FsNode): string {
  const d = new Date(node.mtime)
  const time = `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`
  const size = node.kind === 'file' ? node.data.length : node.kind === 'dir' ? 4096 : node.target.length
  const links = node.kind === 'dir' ? 2 : 1
  const target = node.kind === 'symlink' ? ` -> ${node.target}` : ''
  return `${modeString(node)} ${String(links).padStart(4)} root     root     ${String(size).padStart(9)} ${time} ${name}${target}\n`
}

/** Splits `-abc` style flags (and `--`) from operands. */
function flagsOf(args: string[]): { flags: Set<string>; operands: string[] } {
  const flags = new Set<string>()
  const operands: string[] = []
  let ended = false
  for (const a of args) {
    if (!ended && a === '--') ended = true
    else if (!ended && a.startsWith('-') && a.length > 1) for (const f of a.slice(1)) flags.add(f)
    else operands.push(a)
  }
  return { flags, operands }
}

const failure = (e: unknown) => (e instanceof FsError ? e.message : String(e))

const cat: Builtin = async (args, io) => {
  if (!args.length || args.every((a) => a === '-')) {
    for (let chunk = await io.stdin.read(); chunk; chunk = await io.stdin.read()) io.out(chunk)
    return 0
  }
  let code = 0
  for (const a of args) {
    try {
      io.out(io.fs.readFile(resolvePath(a)))
    } catch (e) {
      io.err(`cat: ${a}: ${failure(e)}\n`)
      code = 1
    }
  }
  return code
}

const ls: Builtin = async (args, io) => {
  const { flags, operands } = flagsOf(args)
  const long = flags.has('l')
  const all = flags.has('a')
  let code = 0
  const paths = operands.length ? operands : ['/']
  paths.forEach((p, i) => {
    const node = io.fs.lookup(resolvePath(p))
    if (!node) {
      io.err(`ls: ${p}: No such file or directory\n`)
      code = 1
    } else if (node.kind !== 'dir') io.out(long ? longEntry(p, node) : `${p}\n`)
    else {
      // Several operands: each directory's listing under its name, as ls does.
      const title = paths.length > 1 ? `${i ? '\n' : ''}${p}:\n` : ''
      const names = [...node.children.keys()].filter((n) => all || !n.startsWith('.')).sort()
      io.out(title + names.map((n) => (long ? longEntry(n, node.children.get(n)!) : `${n}\n`)).join(''))
    }
  })
  return code
}

/** An octal mode, or undefined. */
const octal = (text: string) => (/^[0-7]{1,4}$/.test(text) ? Number.parseInt(text, 8) : undefined)

const mkdir: Builtin = async (args, io) => {
  const parents = args.includes('-p')
  const m = args.indexOf('-m')
  const mode = m >= 0 ? octal(args[m + 1] ?? '') : 0o755
  if (mode === undefined) {
    io.err(`mkdir: invalid mode '${args[m + 1] ?? ''}'\n`)
    return 1
  }
  const dirs = args.filter((a, i) => !a.startsWith('-') && (m < 0 || i !== m + 1))
  let code = 0
  for (const d of dirs) {
    try {
      if (parents) io.fs.mkdirs(resolvePath(d), mode)
      else io.fs.mkdir(resolvePath(d), mode)
    } catch (e) {
      io.err(`mkdir: can't create directory '${d}': ${failure(e)}\n`)
      code = 1
    }
  }
  return code
}

const rm: Builtin = async (args, io) => {
  const { flags, operands } = flagsOf(args)
  const recursive = flags.has('r') || flags.has('R')
  let code = 0
  for (const p of operands) {
    try {
      io.fs.remove(resolvePath(p), recursive)
    } catch (e) {
      if (flags.has('f') && failure(e) === 'No such file or directory') continue
      const node = io.fs.lookup(resolvePath(p))
      io.err(node?.kind === 'dir' && !recursive ? `rm: '${p}' is a directory\n` : `rm: can't remove '${p}': ${failure(e)}\n`)
      code = 1
    }
  }
  return code
}

/** `755`, or symbolic clauses (`u+x`, `go-w`, `a=r`) applied to `current`. */
function parseMode(text: string, current: number): number | undefined {
  const direct = octal(text)
  if (direct !== undefined) return direct
  let mode = current
  for (const clause of text.split(',')) {
    const m = /^([ugoa]*)([+=-])([rwx]*)$/.exec(clause)
    if (!m) return undefined
    const who = m[1] === '' || m[1].includes('a') ? 'ugo' : m[1]
    let bits = 0
    for (const w of who) {
      const shift = w === 'u' ? 6 : w === 'g' ? 3 : 0
      for (const p of m[3]) bits |= (p === 'r' ? 4 : p === 'w' ? 2 : 1) << shift
    }
    const mask = [...who].reduce((acc, w) => acc | (7 << (w === 'u' ? 6 : w === 'g' ? 3 : 0)), 0)
    mode = m[2] === '+' ? mode | bits : m[2] === '-' ? mode & ~bits : (mode & ~mask) | bits
  }
  return mode
}

const chmod: Builtin = async (args, io) => {
  const [spec, ...paths] = args.filter((a) => a !== '-R')
  if (!spec || !paths.length) {
    io.err('chmod: missing operand\n')
    return 1
  }
  let code = 0
  for (const p of paths) {
    const node = io.fs.lookup(resolvePath(p))
    const mode = node ? parseMode(spec, node.mode) : undefined
    if (!node) io.err(`chmod: ${p}: No such file or directory\n`)
    else if (mode === undefined) io.err(`chmod: invalid mode '${spec}'\n`)
    else io.fs.chmod(resolvePath(p), mode)
    if (mode === undefined) code = 1
  }
  return code
}

/** One `test` expression: 0 true, 1 false, 2 a syntax error. */
function evaluate(args: string[], io: Io): number {
  if (args[0] === '!') {
    const inner = evaluate(args.slice(1), io)
    return inner === 2 ? 2 : 1 - inner
  }
  const truth = (b: boolean) => (b ? 0 : 1)
  if (args.length === 0) return 1
  if (args.length === 1) return truth(args[0] !== '')
  if (args.length === 2) {
    const node = io.fs.lookup(resolvePath(args[1]))
    const unary: Record<string, () => boolean> = {
      '-e': () => node !== undefined,
      '-d': () => node?.kind === 'dir',
      '-f': () => node?.kind === 'file',
      '-L': () => node?.kind === 'symlink',
      '-h': () => node?.kind === 'symlink',
      '-s': () => node?.kind === 'file' && node.data.length > 0,
      '-r': () => node !== undefined,
      '-w': () => node !== undefined,
      '-x': () => node !== undefined && (node.mode & 0o111) !== 0,
      '-n': () => args[1] !== '',
      '-z': () => args[1] === '',
    }
    return unary[args[0]] ? truth(unary[args[0]]()) : 2
  }
  if (args.length === 3) {
    const [a, op, b] = args
    const numbers = /^-?\d+$/.test(a) && /^-?\d+$/.test(b)
    const binary: Record<string, () => boolean> = {
      '=': () => a === b,
      '==': () => a === b,
      '!=': () => a !== b,
      '-eq': () => Number(a) === Number(b),
      '-ne': () => Number(a) !== Number(b),
      '-lt': () => Number(a) < Number(b),
      '-le': () => Number(a) <= Number(b),
      '-gt': () => Number(a) > Number(b),
      '-ge': () => Number(a) >= Number(b),
    }
    if (!binary[op] || (op.startsWith('-') && !numbers)) return 2
    return truth(binary[op]())
  }
  return 2
}

const test: Builtin = async (args, io) => {
  const code = evaluate(args, io)
  if (code === 2) io.err('sh: test: syntax error\n')
  return code
}

const bracket: Builtin = async (args, io) => {
  if (args.at(-1) !== ']') {
    io.err("sh: [: missing ']'\n")
    return 2
  }
  return test(args.slice(0, -1), io)
}

export const FILE_COMMANDS: Record<string, Builtin> = { cat, ls, mkdir, rm, chmod, test, '[': bracket }
