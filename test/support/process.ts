import { resolve } from 'node:path'
import { stopWithScope } from './children'

export const MAIN = resolve(import.meta.dir, '../../src/main.ts')

export interface RunningServer {
  child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  /** Everything the server wrote to stderr so far is collected here once it exits. */
  stderr: () => Promise<string>
  /** What it wrote to stdout up to its `listening` line, that line included. */
  started: string
}

/**
 * Starts `serve` of `program` (this checkout's by default; the built binary in its smoke suite) as a
 * separate process on a random port over `dataDir`, with this process's environment and `env` (or
 * `env` alone when `bareEnv`), in `cwd`, on `port` (0: any); resolves once it listens. It serves
 * plain HTTP unless `env` sets `PLATFORM_TLS: ''` (the default start: HTTPS with a CA of its own). Stopped after
 * the test (or file) that started it, unless the test ended it first; with `stoppedByCaller` (a
 * server started in a `beforeAll`: see `stopWithScope`) the caller stops it.
 */
export async function startServer(
  dataDir: string,
  env: Record<string, string> = {},
  {
    program = [process.execPath, MAIN],
    bareEnv = false,
    cwd,
    port = 0,
    stoppedByCaller = false,
  }: { program?: string[]; bareEnv?: boolean; cwd?: string; port?: number; stoppedByCaller?: boolean } = {},
): Promise<RunningServer> {
  const spawned = Bun.spawn([...program, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd,
    env: { ...(bareEnv ? {} : process.env), PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_REQUEST_LOG: 'false', PLATFORM_TLS: 'off', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const child = stoppedByCaller ? spawned : stopWithScope(spawned)
  const reader = child.stdout.getReader()
  let seen = ''
  while (!/"event":"listening"/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited before listening: ${seen} ${await new Response(child.stderr).text()}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined)
  const [, scheme, listening] = /"url":"(https?):\/\/[^:]+:(\d+)"/.exec(seen)!
  const stderr = new Response(child.stderr).text()
  return { child, base: `${scheme}://127.0.0.1:${listening}`, stderr: () => stderr, started: seen }
}

/** Runs `admin create-token` for `username` on `dataDir` and returns the printed token. */
export function createTokenOnCommandLine(dataDir: string, username: string): string {
  const run = Bun.spawnSync([process.execPath, MAIN, 'admin', 'create-token', '--username', username], {
    env: { ...process.env, PLATFORM_DATA_DIR: dataDir },
  })
  if (run.exitCode !== 0) throw new Error(run.stderr.toString())
  return run.stdout.toString().trim()
}
