// What the benches with --workers share: the platform as `serve --workers N`, N bare Bun servers on
// one port (reusePort), nginx with `worker_processes N`, and the CPU time their processes spent
// (from /proc), so each target's CPU per request can be set beside its req/s.

import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { generateServerTls } from '../src/kube-emulator/tls'
import { type Figures, wrk } from './wrk'

export const ROOT = resolve(import.meta.dir, '..')
export const MAIN = join(ROOT, 'src/main.ts')
const PATH_WITH_SBIN = `${process.env.PATH}:/usr/sbin`

/** Exits with the install line when a tool the bench runs is missing. */
export function requireTools(...tools: string[]): void {
  for (const tool of tools) {
    if (Bun.spawnSync(['which', tool], { env: { PATH: PATH_WITH_SBIN } }).exitCode !== 0) {
      console.error(`${tool} is not installed: apt-get install -y ${tool}`)
      process.exit(2)
    }
  }
}

/** `--workers 1,2` → [1, 2]: the process counts one run measures, each against the first. */
export function workerCounts(text: string): number[] {
  const counts = text.split(',').map((part) => Number(part.trim()))
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1)) {
    console.error(`--workers takes process counts separated by commas (1,2), got "${text}"`)
    process.exit(2)
  }
  return counts
}

/** A loopback port free right now. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  return port
}

/** Reads a child's stdout until `pattern` matches, then lets the rest drain; the match. */
export async function readUntil(child: { stdout: ReadableStream<Uint8Array> }, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const reader = child.stdout.getReader()
  let seen = ''
  let match: RegExpExecArray | null
  while (!(match = pattern.exec(seen))) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${what} did not start: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined)
  return match
}

/** A target started by the bench: the processes whose CPU time counts for it, and how to stop it. */
export interface Target {
  port: number
  pids(): number[]
  stop(): Promise<void>
}

// Whatever happens, nothing the bench started outlives it.
const started = new Set<Bun.Subprocess>()
process.on('exit', () => {
  for (const child of started) child.kill('SIGKILL')
})
function track(child: Bun.Subprocess): Bun.Subprocess {
  started.add(child)
  void child.exited.then(() => started.delete(child))
  return child
}
async function stopAll(children: Bun.Subprocess[]): Promise<void> {
  for (const child of children) child.kill('SIGTERM')
  await Promise.all(children.map((child) => child.exited))
}

/** `pid` and its direct children (nginx's workers, the supervisor's workers). */
export function withChildren(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  return [pid, ...children]
}

const ticksPerSecond = Number(new TextDecoder().decode(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout).trim()) || 100

/** User plus system CPU milliseconds the processes `pids` have spent so far. */
export function cpuMsOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return sum + ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
  }, 0)
}

/** Resident memory of the processes `pids`, in MB. */
export function rssMbOf(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024, 0)
}

/**
 * The platform as an operator runs it: `serve` on `port` for one process, `serve --workers N`
 * (a supervisor and N workers sharing the port) for more. Resolves once every worker listens.
 * `main` is another checkout's entry point, to compare versions.
 */
export async function startPlatform(workers: number, port: number, env: Record<string, string | undefined>, main = MAIN): Promise<Target> {
  const child = track(
    Bun.spawn([process.execPath, main, 'serve', '--port', String(port), '--host', '127.0.0.1', '--workers', String(workers)], {
      env,
      stdout: 'pipe',
      stderr: 'inherit',
    }),
  ) as Bun.Subprocess<'ignore', 'pipe', 'inherit'>
  await readUntil(
    child,
    workers === 1 ? /"event":"listening"/ : new RegExp(`"event":"listening"[^\\n]*"workers":${workers}`),
    'the platform',
  )
  return {
    port,
    // One process serves itself; a supervisor's own CPU counts too (it is part of what runs).
    pids: () => withChildren(child.pid),
    stop: () => stopAll([child]),
  }
}

/**
 * The platform's environment for a bench: its data under `dir`, loopback members allowed, no sandbox, no request log,
 * plain HTTP (the default is HTTPS with a CA of its own: docs/decisions.md §12) unless tlsPlatformEnv names certificates.
 */
export const platformEnv = (dir: string): Record<string, string | undefined> => ({
  ...process.env,
  PLATFORM_TLS: 'off',
  PLATFORM_DATA_DIR: join(dir, 'data'),
  PLATFORM_ADMIN_PASSWORD: 'bench-password-1',
  PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true',
  PLATFORM_SANDBOX_CLUSTER: 'false',
  PLATFORM_REQUEST_LOG: 'false',
})

/**
 * platformEnv serving HTTPS on `port` with a certificate of its own CA (written under `dir`), as
 * kubectl and agents reach a platform: the environment, the https origin and the CA's PEM and file.
 */
export async function tlsPlatformEnv(dir: string, port: number) {
  const tls = await generateServerTls(['127.0.0.1'])
  for (const [name, pem] of Object.entries({ 'tls.crt': tls.certPem, 'tls.key': tls.keyPem, 'ca.crt': tls.caCertPem }))
    writeFileSync(join(dir, name), pem)
  const base = `https://127.0.0.1:${port}`
  const env = {
    ...platformEnv(dir),
    PLATFORM_PUBLIC_URL: base,
    PLATFORM_TLS_CERT_FILE: join(dir, 'tls.crt'),
    PLATFORM_TLS_KEY_FILE: join(dir, 'tls.key'),
    PLATFORM_TLS_CA_FILE: join(dir, 'ca.crt'),
  }
  return { env, base, caPem: tls.caCertPem, caFile: join(dir, 'ca.crt') }
}

/** Runs a command of the platform's command line (`admin create-token`, `cluster import`) with `env`; its output, trimmed. */
export function platformCommand(env: Record<string, string | undefined>, main = MAIN): (...args: string[]) => Promise<string> {
  return async (...args) => {
    const child = Bun.spawn([process.execPath, main, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    if (code !== 0) throw new Error(`${args.join(' ')}: ${err}`)
    return out.trim()
  }
}

/** `count` processes of the bench script `script`, each serving `port` with reusePort (it reads PORT). */
export async function startBare(
  script: string,
  count: number,
  port: number,
  env: Record<string, string | undefined> = {},
): Promise<Target> {
  const children: Bun.Subprocess<'ignore', 'pipe', 'inherit'>[] = []
  for (let i = 0; i < count; i++) {
    const child = track(
      Bun.spawn([process.execPath, join(ROOT, 'bench', script)], {
        env: { ...process.env, ...env, PORT: String(port) },
        stdout: 'pipe',
        stderr: 'inherit',
      }),
    ) as Bun.Subprocess<'ignore', 'pipe', 'inherit'>
    await readUntil(child, /^\d+\n/, script)
    children.push(child)
  }
  return { port, pids: () => children.map((c) => c.pid), stop: () => stopAll(children) }
}

/**
 * nginx with `worker_processes workers` in `dir`, listening on `port` with `location` (the body of
 * its `location /` block) and `http` (lines before the server block, for upstreams).
 */
export async function startNginx(dir: string, workers: number, port: number, site: { http?: string; location: string }): Promise<Target> {
  const config = join(dir, `nginx-${port}.conf`)
  writeFileSync(
    config,
    `worker_processes ${workers};
daemon off;
pid ${dir}/nginx-${port}.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  ${site.http ?? ''}
  server {
    listen 127.0.0.1:${port};
    location / {
${site.location}
    }
  }
}
`,
  )
  const child = track(Bun.spawn(['nginx', '-c', config, '-p', dir], { env: { PATH: PATH_WITH_SBIN }, stdout: 'ignore', stderr: 'inherit' }))
  // Up once it answers and every worker has forked.
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    )
    if (up && withChildren(child.pid).length === workers + 1) break
    await Bun.sleep(50)
  }
  return { port, pids: () => withChildren(child.pid), stop: () => stopAll([child]) }
}

/** What wrk measured for a target, with the CPU time its processes spent per request (µs). */
export interface Measured extends Figures {
  cpuUs: number
}

/** wrk against `url` while the CPU time of `target`'s processes is counted. */
export async function measureCpu(
  url: string,
  headers: Record<string, string>,
  load: { connections: string; duration: string; script?: string },
  target: Pick<Target, 'pids'>,
): Promise<Measured> {
  const pids = target.pids()
  const before = cpuMsOf(pids)
  const figures = await wrk(url, headers, load)
  return { ...figures, cpuUs: ((cpuMsOf(pids) - before) * 1000) / figures.requests }
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
