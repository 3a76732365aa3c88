/**
 * The built-in command set exec runs: `echo`, `env`, `date`, `sleep`, `exit`, …, the file commands
 * (`cat`, `ls`, `mkdir`, `rm`, `test`, `tar`) over the container's filesystem, and a `sh` that runs
 * `-c` scripts or reads lines from stdin (`;`, `&&`, `||`, `|`, quotes, `$VAR`, `$?`). Everything is
 * a function over the session's streams; nothing touches the host.
 */
import type { Builtin, Io } from './command-io'
import { FILE_COMMANDS } from './file-commands'
import { tar } from './tar-command'

export type { Io } from './command-io'

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'zsh'])
/** Longer scripts are refused, which keeps the word splitter's work bounded. */
const MAX_SCRIPT = 64 * 1024

/** Waits `ms`, or less when `signal` aborts. */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    // Timers overflow past 2^31-1 ms; a longer sleep waits that long (about 24 days) instead of not at all.
    const t = setTimeout(resolve, Math.min(ms, 2 ** 31 - 1))
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t)
        resolve()
      },
      { once: true },
    )
  })

/** `date`'s default format: `Sun Nov 22 04:17:44 UTC 2026`. */
function dateText(d: Date): string {
  const [day, dd, mon, yyyy, time] = d.toUTCString().replace(',', '').split(' ')
  return `${day} ${mon} ${dd} ${time} UTC ${yyyy}`
}

/** An http(s) URL's host and port (80/443 by default); undefined when it is no URL. */
function target(url: string): { host: string; port: number } | undefined {
  try {
    const u = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`)
    return { host: u.hostname, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) }
  } catch {
    return undefined
  }
}

/** What an emulated Service answers: there is no real container behind it. */
const page = (host: string) =>
  `<!DOCTYPE html>\n<html><head><title>${host}</title></head><body><p>${host} answered (emulated service)</p></body></html>\n`

const BUILTINS: Record<string, Builtin> = {
  ...FILE_COMMANDS,
  tar,
  /** busybox wget: reaches Services of the cluster (by name) with ready endpoints; `-O -` prints the page. */
  wget: async (args, io) => {
    const quiet = args.includes('-q')
    const toStdout = args.some((a, i) => (a === '-O' && args[i + 1] === '-') || a === '-O-')
    const url = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-O' && args[i - 1] !== '-T')
    const t = url ? target(url) : undefined
    if (!url || !t) {
      io.err('BusyBox v1.36.1 multi-call binary.\n\nUsage: wget [-q] [-O FILE] URL\n')
      return 1
    }
    const ip = io.lookupService?.(t.host, t.port)
    if (!ip) {
      io.err(`wget: bad address '${t.host}:${t.port}'\n`)
      return 1
    }
    const body = page(t.host)
    if (!quiet) io.err(`Connecting to ${t.host}:${t.port} (${ip}:${t.port})\n`)
    if (toStdout) io.out(body)
    else if (!quiet)
      io.err(
        `saving to 'index.html'\nindex.html           100% |********************************|   ${body.length}  0:00:00 ETA\n'index.html' saved\n`,
      )
    return 0
  },
  /** curl: the same reach as wget; the page on stdout. */
  curl: async (args, io) => {
    const url = args.find((a, i) => !a.startsWith('-') && !['-o', '-H', '-X', '-d', '-m', '--max-time'].includes(args[i - 1]))
    const t = url ? target(url) : undefined
    if (!url || !t) {
      io.err('curl: no URL specified!\n')
      return 2
    }
    if (!io.lookupService?.(t.host, t.port)) {
      io.err(`curl: (6) Could not resolve host: ${t.host}\n`)
      return 6
    }
    io.out(page(t.host))
    return 0
  },

  echo: async (args, io) => {
    const newline = args[0] !== '-n'
    io.out(`${(newline ? args : args.slice(1)).join(' ')}${newline ? '\n' : ''}`)
    return 0
  },
  env: async (_args, io) => {
    io.out(
      Object.entries(envWithSize(io))
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    )
    return 0
  },
  printenv: async (args, io) => {
    const env = envWithSize(io)
    if (!args.length) return BUILTINS.env(args, io)
    const found = args.filter((a) => a in env)
    io.out(found.map((a) => `${env[a]}\n`).join(''))
    return found.length === args.length ? 0 : 1
  },
  date: async (_args, io) => {
    io.out(`${dateText(new Date())}\n`)
    return 0
  },
  sleep: async (args, io) => {
    const s = Number(args[0])
    if (!args.length || !Number.isFinite(s) || s < 0) {
      io.err(`sleep: invalid time interval '${args[0] ?? ''}'\n`)
      return 1
    }
    await sleep(s * 1000, io.signal)
    return 0
  },
  true: async () => 0,
  false: async () => 1,
  pwd: async (_args, io) => {
    io.out('/\n')
    return 0
  },
  hostname: async (_args, io) => {
    io.out(`${io.hostname}\n`)
    return 0
  },
  whoami: async (_args, io) => {
    io.out('root\n')
    return 0
  },
  uname: async (args, io) => {
    io.out(args.includes('-a') ? `Linux ${io.hostname} 6.1.0-emulated #1 SMP x86_64 GNU/Linux\n` : 'Linux\n')
    return 0
  },
}

/** The names the shell runs, as the containers' /bin lists them. */
export const COMMAND_NAMES: readonly string[] = [...Object.keys(BUILTINS), ...SHELLS].sort()

function envWithSize(io: Io): Record<string, string> {
  if (!io.tty) return io.env
  const { width, height } = io.size()
  return { ...io.env, TERM: 'xterm', COLUMNS: String(width), LINES: String(height) }
}

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1)

/** Runs argv as the container runtime would; a string result means exec itself failed. */
export async function runCommand(argv: string[], io: Io): Promise<number | string> {
  const name = basename(argv[0])
  if (SHELLS.has(name)) {
    if (argv[1] === '-c') return argv[2] === undefined ? usage(io) : (await runScript(argv[2], io, { status: 0 })).code
    return interactive(io)
  }
  const builtin = BUILTINS[name]
  if (!builtin) return `error executing command in container: exec: "${argv[0]}": executable file not found in $PATH`
  return builtin(argv.slice(1), io)
}

function usage(io: Io): number {
  io.err('sh: -c requires an argument\n')
  return 2
}

async function interactive(io: Io): Promise<number> {
  const state = { status: 0 }
  for (;;) {
    if (io.tty) io.out('/ # ')
    const line = await io.stdin.readLine()
    if (line === null || io.signal.aborted) return state.status
    const result = await runScript(line, io, state)
    if (result.exited) return result.code
  }
}

type Op = ';' | '&&' | '||' | '|'
interface Segment {
  text: string
  op: Op
}

/** Splits a script at unquoted `;`, `&&`, `||`, `|` and newlines, one linear pass. */
function splitScript(script: string): Segment[] {
  const out: Segment[] = []
  let cur = '',
    quote = ''
  for (let i = 0; i < script.length; i++) {
    const c = script[i]
    if (quote) {
      cur += c
      if (c === quote) quote = ''
      else if (c === '\\' && quote === '"' && i + 1 < script.length) cur += script[++i]
      continue
    }
    if (c === '\\' && i + 1 < script.length) {
      cur += c + script[++i]
      continue
    }
    if (c === '"' || c === "'") {
      quote = c
      cur += c
      continue
    }
    if (c === '#' && (i === 0 || /\s/.test(script[i - 1]))) {
      while (i + 1 < script.length && script[i + 1] !== '\n') i++
      continue
    }
    const two = script.slice(i, i + 2)
    if (two === '&&' || two === '||') {
      out.push({ text: cur, op: two })
      cur = ''
      i++
      continue
    }
    if (c === ';' || c === '\n' || c === '|') {
      out.push({ text: cur, op: c === '|' ? '|' : ';' })
      cur = ''
      continue
    }
    cur += c
  }
  out.push({ text: cur, op: ';' })
  return out.filter((s) => s.text.trim())
}

/** Splits one command into words, expanding `$VAR`, `${VAR}` and `$?` outside single quotes. */
function words(text: string, env: Record<string, string>, status: number): string[] {
  const out: string[] = []
  let cur = '',
    inWord = false,
    quote = ''
  const expand = (i: number): [string, number] => {
    if (text[i + 1] === '?') return [String(status), i + 1]
    if (text[i + 1] === '{') {
      const end = text.indexOf('}', i)
      if (end > 0) return [env[text.slice(i + 2, end)] ?? '', end]
    }
    let j = i + 1
    while (j < text.length && /[A-Za-z0-9_]/.test(text[j])) j++
    return j === i + 1 ? ['$', i] : [env[text.slice(i + 1, j)] ?? '', j - 1]
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote === "'") {
      if (c === "'") quote = ''
      else cur += c
      continue
    }
    if (quote === '"') {
      if (c === '"') quote = ''
      else if (c === '\\' && i + 1 < text.length && '"\\$'.includes(text[i + 1])) cur += text[++i]
      else if (c === '$') {
        const [v, j] = expand(i)
        cur += v
        i = j
      } else cur += c
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      inWord = true
      continue
    }
    if (c === '\\' && i + 1 < text.length) {
      cur += text[++i]
      inWord = true
      continue
    }
    if (c === ' ' || c === '\t') {
      if (inWord) out.push(cur)
      cur = ''
      inWord = false
      continue
    }
    if (c === '$') {
      const [v, j] = expand(i)
      cur += v
      i = j
      inWord = true
      continue
    }
    cur += c
    inWord = true
  }
  if (inWord) out.push(cur)
  return out
}

/** Stdin fed from a finished command's output, for pipelines. */
function bufferedStdin(data: Uint8Array): Io['stdin'] {
  let rest: Uint8Array | null = data.length ? data : null
  return {
    read: async () => {
      const r = rest
      rest = null
      return r
    },
    readLine: async () => {
      if (!rest) return null
      const nl = rest.indexOf(10)
      const line = new TextDecoder().decode(nl >= 0 ? rest.subarray(0, nl) : rest)
      rest = nl >= 0 && nl + 1 < rest.length ? rest.subarray(nl + 1) : null
      return line
    },
  }
}

const bytesOf = (data: string | Uint8Array) => (typeof data === 'string' ? new TextEncoder().encode(data) : data)

/** `>&2` / `1>&2` send stdout to stderr and `2>&1` the reverse; other redirections are not supported. */
function redirect(argv: string[], io: Io): [string[], Io] {
  let out = io.out,
    err = io.err
  const rest = argv.filter((a) => {
    if (a === '>&2' || a === '1>&2') {
      out = (data) => io.err(typeof data === 'string' ? data : new TextDecoder().decode(data))
      return false
    }
    if (a === '2>&1') {
      err = io.out
      return false
    }
    return true
  })
  return [rest, { ...io, out, err }]
}

async function runSimple(text: string, outer: Io, status: number): Promise<{ code: number; exited: boolean }> {
  const [argv, io] = redirect(words(text, outer.env, status), outer)
  if (!argv.length) return { code: status, exited: false }
  if (argv[0] === 'exit') {
    const n = argv[1] === undefined ? status : Number(argv[1])
    return { code: Number.isInteger(n) ? ((n % 256) + 256) % 256 : 2, exited: true }
  }
  if (argv[0] === 'export') {
    for (const a of argv.slice(1)) {
      const eq = a.indexOf('=')
      if (eq > 0) io.env[a.slice(0, eq)] = a.slice(eq + 1)
    }
    return { code: 0, exited: false }
  }
  const result = await runCommand(argv, io)
  if (typeof result === 'number') return { code: result, exited: false }
  io.err(`sh: ${argv[0]}: not found\n`)
  return { code: 127, exited: false }
}

/** Runs a script; `exit` stops it. `state.status` carries `$?` across interactive lines. */
async function runScript(script: string, io: Io, state: { status: number }): Promise<{ code: number; exited: boolean }> {
  if (script.length > MAX_SCRIPT) {
    io.err('sh: script too long\n')
    state.status = 2
    return { code: 2, exited: false }
  }
  let skip = false
  const segments = splitScript(script)
  for (let i = 0; i < segments.length; i++) {
    // Gather a pipeline: segments joined by `|` run left to right, each reading the previous output.
    const pipeline = [segments[i]]
    while (segments[i].op === '|' && i + 1 < segments.length) pipeline.push(segments[++i])
    const op = segments[i].op
    if (!skip) {
      let input = io.stdin
      let result = { code: 0, exited: false }
      for (let p = 0; p < pipeline.length; p++) {
        const last = p === pipeline.length - 1
        const captured: Uint8Array[] = []
        const stageIo: Io = {
          ...io,
          stdin: input,
          out: last
            ? io.out
            : (t) => {
                captured.push(bytesOf(t))
              },
        }
        result = await runSimple(pipeline[p].text, stageIo, state.status)
        input = bufferedStdin(Buffer.concat(captured))
      }
      state.status = result.code
      if (result.exited || io.signal.aborted) return { code: result.code, exited: true }
    }
    skip = (op === '&&' && state.status !== 0) || (op === '||' && state.status === 0)
  }
  return { code: state.status, exited: false }
}
