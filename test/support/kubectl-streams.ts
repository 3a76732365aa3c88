/**
 * Driving kubectl's long-running stream verbs in tests: a port-forward held open (its local port
 * read from kubectl's own "Forwarding from" line) and an attach read until enough lines came.
 */
/** A started kubectl: what these helpers need of Bun's Subprocess with piped output. */
export interface KubectlProcess {
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
  /** Interrupts kubectl as Ctrl-C does and waits for it to exit. */
  stop(): Promise<number>
}

/** Reads a stream until `done(text)` holds; the text read so far. Throws when the stream ends first. */
async function readUntil(stream: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
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
    stop: async () => {
      process.kill('SIGINT')
      return process.exited
    },
  }
}

/** Runs `kubectl attach …` until its stdout has `lines` complete lines, then interrupts it; those lines. */
export async function attachLines(spawn: Spawn, args: string[], lines: number): Promise<string[]> {
  const process = spawn(['attach', ...args])
  try {
    const text = await readUntil(process.stdout, (t) => t.split('\n').length > lines)
    return text.split('\n').slice(0, lines)
  } finally {
    process.kill('SIGINT')
    await process.exited
  }
}
