import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AppError } from '../../errors'
import type { Logger } from '../../logger'
import { FairSlots, type SlotShares } from './slots'

/**
 * The real Helm as a renderer (docs/decisions.md §4): `helm template` in a subprocess that has no
 * network (a network namespace of its own, where this machine allows one: only a loopback that is
 * down; besides, no kubeconfig and proxies pointing nowhere), Helm's home dirs in a throw-away
 * directory, a wall-clock timeout, a memory cap (RLIMIT_DATA through prlimit: Go reserves address
 * space it never touches, so RLIMIT_AS would stop it at start), a cap on its output, and a share
 * of the Helm slots per caller (slots.ts).
 */

export interface HelmSettings {
  helmPath: string
  /** Run once before the first render: puts Helm at helmPath (the built binary unpacks the one it carries). */
  install?: () => Promise<void>
  timeoutMs: number
  memoryBytes: number
  kubeVersion: string
  /** How many helm processes run at once, and per caller; how many renders may wait. */
  slots: SlotShares
}

export interface TemplateRequest {
  release: string
  namespace: string
  /** The verified chart archive. */
  chartPath: string
  /** JSON of the user values, or undefined to render with the chart's defaults only. */
  valuesJson: string | undefined
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024
const PRLIMIT = '/usr/bin/prlimit'
const UNSHARE = '/usr/bin/unshare'
/** A new network namespace: as root directly, as another user inside a user namespace of its own. */
const NO_NETWORK_PREFIXES = [
  [UNSHARE, '--net', '--'],
  [UNSHARE, '--user', '--map-root-user', '--net', '--'],
]
// A proxy address nothing listens on: should Helm ever try the network, it fails at once.
const NOWHERE = 'http://127.0.0.1:9'

export class HelmRenderer {
  private readonly slots: FairSlots
  private readonly capMemory = existsSync(PRLIMIT)
  private noNetwork: Promise<string[]> | undefined
  private closed = false
  private readonly children = new Set<{ kill(signal: number | NodeJS.Signals): void }>()
  private installed: Promise<void> | undefined

  constructor(
    readonly settings: HelmSettings,
    private readonly log: Logger,
  ) {
    this.slots = new FairSlots(settings.slots)
  }

  /**
   * The `helm template` output (CRDs included), run in one of `caller`'s slots; throws invalid with
   * Helm's own message when the chart does not render, unavailable without Helm or when the caller's
   * line is full.
   */
  async template(request: TemplateRequest, caller: string): Promise<string> {
    await this.install()
    // An operator's matter, not the chart's: 503 saying what to set, without the server's paths.
    if (!existsSync(this.settings.helmPath))
      throw new AppError('unavailable', 'Helm is not installed on this server (run npm install, or set HELM_PATH)')
    const release = await this.slots.acquire(caller)
    if (this.closed) {
      release()
      throw new AppError('unavailable', 'the server is shutting down')
    }
    const home = mkdtempSync(join(tmpdir(), 'platform-helm-'))
    try {
      return await this.run(request, home)
    } finally {
      rmSync(home, { recursive: true, force: true })
      release()
    }
  }

  /** Runs the settings' install once; a failed one is tried again on the next render. */
  private async install(): Promise<void> {
    if (!this.settings.install) return
    this.installed ??= this.settings.install()
    try {
      await this.installed
    } catch (error) {
      this.installed = undefined
      throw error
    }
  }

  /** Ends every helm process still running and starts no more (the app is closing). */
  close(): void {
    this.closed = true
    for (const child of this.children) child.kill('SIGKILL')
  }

  /** The command prefix that takes Helm off the network, found once: the first that this machine permits. */
  private noNetworkPrefix(): Promise<string[]> {
    this.noNetwork ??= (async () => {
      for (const prefix of existsSync(UNSHARE) ? NO_NETWORK_PREFIXES : []) {
        const probe = Bun.spawn([...prefix, '/bin/true'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
        if ((await probe.exited) === 0) return prefix
      }
      this.log.error('helm renders run on the network of the server: unshare may not make a network namespace here', {})
      return []
    })()
    return this.noNetwork
  }

  private argsOf(request: TemplateRequest, home: string, noNetwork: string[]): string[] {
    const args = [
      ...noNetwork,
      this.settings.helmPath,
      'template',
      request.release,
      request.chartPath,
      '--namespace',
      request.namespace,
      '--kube-version',
      this.settings.kubeVersion,
      '--include-crds',
    ]
    if (request.valuesJson !== undefined) {
      const valuesPath = join(home, 'values.json')
      writeFileSync(valuesPath, request.valuesJson, { mode: 0o600 })
      args.push('--values', valuesPath)
    }
    return this.capMemory ? [PRLIMIT, `--data=${this.settings.memoryBytes}`, '--', ...args] : args
  }

  private async run(request: TemplateRequest, home: string): Promise<string> {
    const child = Bun.spawn(this.argsOf(request, home, await this.noNetworkPrefix()), {
      cwd: home,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      env: {
        PATH: '/usr/bin:/bin',
        HOME: home,
        KUBECONFIG: '/dev/null',
        HELM_CACHE_HOME: join(home, 'cache'),
        HELM_CONFIG_HOME: join(home, 'config'),
        HELM_DATA_HOME: join(home, 'data'),
        HELM_PLUGINS: join(home, 'plugins'),
        HTTP_PROXY: NOWHERE,
        HTTPS_PROXY: NOWHERE,
        NO_PROXY: '',
        GOMEMLIMIT: String(Math.floor(this.settings.memoryBytes * 0.8)),
      },
    })
    this.children.add(child)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, this.settings.timeoutMs)
    try {
      const [stdout, stderr, code] = await Promise.all([
        readCapped(child.stdout, () => child.kill('SIGKILL')),
        new Response(child.stderr).text(),
        child.exited,
      ])
      if (timedOut) throw new AppError('invalid', `helm template did not finish within ${this.settings.timeoutMs} ms`)
      if (stdout === undefined) throw new AppError('invalid', `helm template wrote more than ${MAX_OUTPUT_BYTES} bytes`)
      if (code !== 0) throw new AppError('invalid', `the chart does not render: ${helmMessage(stderr, request, home)}`)
      return stdout
    } finally {
      clearTimeout(timer)
      this.children.delete(child)
    }
  }
}

/** The output as text, or undefined (and the process killed) past MAX_OUTPUT_BYTES. */
async function readCapped(stream: ReadableStream<Uint8Array>, kill: () => void): Promise<string | undefined> {
  const chunks: Uint8Array[] = []
  let total = 0
  const reader = stream.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const chunk = read.value
    total += chunk.byteLength
    if (total > MAX_OUTPUT_BYTES) {
      kill()
      await reader.cancel()
      return undefined
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Helm's error without our temporary paths or a memory-cap crash dump, at most a few lines. */
function helmMessage(stderr: string, request: TemplateRequest, home: string): string {
  if (/fatal error: out of memory|runtime: out of memory/.test(stderr)) return 'helm ran out of its memory cap'
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('walk.go:') && !/^\s/.test(l))
  const text = (lines.find((l) => l.startsWith('Error:')) ?? lines[0] ?? 'helm failed').replace(/^Error: /, '')
  return text.split(home).join('').split(request.chartPath).join('chart').slice(0, 2000)
}
