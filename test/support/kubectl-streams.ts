/**
 * Driving kubectl's long-running stream verbs in tests: a port-forward held open (its local port
 * read from kubectl's own "Forwarding from" line), an attach read until enough lines came, and a
 * cp round trip.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A started kubectl: what these helpers need of Bun's Subprocess with piped output. */
export interface KubectlProcess {
  /** Its input, when started with a pipe there. */
  stdin?: { write(chunk: string): unknown; flush(): unknown } | number | null
  stdout: ReadableStream<Uint8Array>
  stderr: ReadableStream<Uint8Array>
  kill(signal?: NodeJS.Signals | number): void
  exited: Promise<number>
}

type Spawn = (args: string[]) => KubectlProcess

export interface Forward {
  /** The local port kubectl listens on. */
  port: number
  process: KubectlProcess
  /** What kubectl printed so far (a "Handling connection" line per connection); read all along, so its pipe never fills. */
  output(): string
  /** All kubectl printed on stderr, once it exited. */
  stderr: Promise<string>
  /** Interrupts kubectl as Ctrl-C does (or ends it with `signal`) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number>
}

/** Reads a stream until `done(text)` holds; the text read so far. Throws when the stream ends first. */
export async function readUntil(stream: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = stream.getReader()
  let text = ''
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read()
      if (ended) throw new Error(`the stream ended first: ${JSON.stringify(text)}`)
      text += new TextDecoder().decode(value)
    }
  } finally {
    reader.releaseLock()
  }
  return text
}

/** `kubectl port-forward <target> :<remote>` and the local port it picked; the caller stops it. */
export async function portForward(spawn: Spawn, target: string, remotePort: number, extra: string[] = []): Promise<Forward> {
  const process = spawn(['port-forward', target, `:${remotePort}`, '--address', '127.0.0.1', ...extra])
  const stderr = new Response(process.stderr).text()
  let line: string
  try {
    line = await readUntil(process.stdout, (t) => /Forwarding from 127\.0\.0\.1:\d+/.test(t))
  } catch (error) {
    process.kill()
    throw new Error(`kubectl port-forward did not start: ${await stderr}`, { cause: error })
  }
  const port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(line)![1])
  let output = line
  void process.stdout.pipeTo(
    new WritableStream({
      write: (chunk) => {
        output += new TextDecoder().decode(chunk)
      },
    }),
  )
  return {
    port,
    process,
    output: () => output,
    stderr,
    stop: async (signal = 'SIGINT') => {
      process.kill(signal)
      return process.exited
    },
  }
}

/**
 * Runs `kubectl attach …` until its stdout has `lines` complete lines, then interrupts it; those
 * lines. With `input`, attaches with `-i` and writes it to kubectl's stdin first (`spawn` must pipe it).
 */
export async function attachLines(spawn: Spawn, args: string[], lines: number, input?: string): Promise<string[]> {
  const process = spawn(['attach', ...(input === undefined ? [] : ['-i']), ...args])
  try {
    if (input !== undefined) {
      const stdin = process.stdin
      if (typeof stdin !== 'object' || stdin === null) throw new Error('attach with input needs kubectl started with a stdin pipe')
      stdin.write(input)
      stdin.flush()
    }
    const text = await readUntil(process.stdout, (t) => t.split('\n').length > lines)
    return text.split('\n').slice(0, lines)
  } finally {
    process.kill('SIGINT')
    await process.exited
  }
}

/**
 * Keeps `url` busy for at least `holdMs` and `requests` requests, one after another (the forward
 * is in use all along, never idle), each on a connection of its own (a forwarded connection, so a
 * stream pair, per request); each answer must be a 200 whose body matches `body`. The number of requests made.
 */
export async function holdWithRequests(url: string, holdMs: number, requests: number, body: RegExp): Promise<number> {
  const until = Date.now() + holdMs
  let made = 0
  while (made < requests || Date.now() < until) {
    const res = await fetch(`${url}/request-${made}`, { headers: { connection: 'close' } })
    const text = await res.text()
    if (res.status !== 200 || !body.test(text)) throw new Error(`request ${made} answered ${res.status}: ${text}`)
    made++
  }
  return made
}

/** What the cp round trip copies: under `site`, a page and a script of mode 0750 in `assets`; and a file of its own. */
export const CP_TREE = { page: '<h1>copied</h1>\n', script: '#!/bin/sh\n', file: 'one file\n' } as const

/**
 * Writes CP_TREE under `dir` and copies it with kubectl cp (`run`) into `pod` (`namespace/name`) under
 * /tmp (`/tmp/site`, `/tmp/one.txt`), then back out; the copies' exit codes and what came back.
 */
export async function cpRoundTrip(run: (args: string[]) => Promise<{ code: number }>, pod: string, dir: string) {
  mkdirSync(join(dir, 'site/assets'), { recursive: true })
  writeFileSync(join(dir, 'site/index.html'), CP_TREE.page)
  writeFileSync(join(dir, 'site/assets/run.sh'), CP_TREE.script)
  chmodSync(join(dir, 'site/assets/run.sh'), 0o750)
  writeFileSync(join(dir, 'one.txt'), CP_TREE.file)
  const codes: number[] = []
  for (const [from, to] of [
    [join(dir, 'site'), `${pod}:/tmp/site`],
    [join(dir, 'one.txt'), `${pod}:/tmp/one.txt`],
    [`${pod}:/tmp/site`, join(dir, 'back')],
    [`${pod}:/tmp/one.txt`, join(dir, 'one-back.txt')],
  ] as const)
    codes.push((await run(['cp', from, to])).code)
  const read = (path: string) => (existsSync(join(dir, path)) ? readFileSync(join(dir, path), 'utf8') : undefined)
  return { codes, page: read('back/index.html'), script: read('back/assets/run.sh'), file: read('one-back.txt') }
}
