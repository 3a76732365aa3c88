/** Test fixtures: an emulator per test on a random port, a client with its token and CA, polling, scratch dirs. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/kube-emulator'
import { type ChannelSession, openChannelSocket } from '../support/channel-socket'
import type { KubectlProcess } from '../support/kubectl-streams'

export interface Client {
  emulator: Emulator
  /** fetch against the emulator with the admin token (or `token`) and its CA. */
  request(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string>; token?: string | null },
  ): Promise<Response>
  get(path: string): Promise<Response>
  json<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>
}

const running: Emulator[] = []

/** Starts an emulator on a random port; `stopAll` in afterEach stops it. */
export async function emulator(opts: EmulatorOptions = {}): Promise<Client> {
  const e = await startEmulator({ port: 0, ...opts })
  running.push(e)
  const request: Client['request'] = (method, path, init = {}) => {
    const headers: Record<string, string> = { ...(init.headers ?? {}) }
    const token = init.token === undefined ? e.token : init.token
    if (token) headers.Authorization = `Bearer ${token}`
    let body: string | undefined
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
      headers['Content-Type'] ??= 'application/json'
    }
    return fetch(`${e.url}${path}`, { method, headers, body, tls: e.caCertPem ? { ca: e.caCertPem } : undefined })
  }
  return {
    emulator: e,
    request,
    get: (path) => request('GET', path),
    json: async (method, path, body, headers) => {
      const res = await request(method, path, { body, headers })
      return { status: res.status, body: await res.json() }
    },
  }
}

/** The name of a seeded `api` pod (one container, port 8080). */
export async function apiPod(k: Client): Promise<string> {
  const { body } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dapi')
  return body.items[0].metadata.name
}

/** Opens a channel-protocol WebSocket (exec, attach, port-forward) to `path` offering `protocols`; collects frames until the server closes. */
/** Defines the namespaced custom resource Gizmo (toys.io/v1, no printer columns). */
export const defineGizmos = (k: Client) =>
  k.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    metadata: { name: 'gizmos.toys.io' },
    spec: {
      group: 'toys.io',
      scope: 'Namespaced',
      names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
      versions: [{ name: 'v1', served: true, storage: true }],
    },
  })

/** A WebSocket upgrade request sent as a plain request: the refusals an upgrade meets before any socket exists. */
export const upgradeWithoutSocket = (k: Client, path: string, headers: Record<string, string> = {}) =>
  k.request('GET', path, {
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      ...headers,
    },
  })

export const channelSocket = (k: Client, path: string, protocols: string[]): Promise<ChannelSession> =>
  openChannelSocket(
    `${k.emulator.url.replace(/^http/, 'ws')}${path}`,
    protocols,
    { Authorization: `Bearer ${k.emulator.token}` },
    k.emulator.caCertPem,
  )

export async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((e) => e.stop()))
}

/** Polls until `check` returns a truthy value (controllers reconcile asynchronously). */
export { type ChannelSession, channelText } from '../support/channel-socket'
export { eventually } from '../support/wait'

/** A scratch directory (kubectl's HOME and cache, kubeconfig files). */
export const scratch = () => mkdtempSync(join(tmpdir(), 'kube-emulator-'))

const KUBECTL = join(import.meta.dir, '../../.tools/bin/kubectl')

export interface Kubectl {
  run(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>
  spawn(args: string[]): KubectlProcess
  /** The kubeconfig file kubectl (and helm) use. */
  kubeconfig: string
  /** Environment for other tools (helm): HOME and KUBECONFIG in the scratch directory. */
  env: Record<string, string | undefined>
}

/** A TLS emulator and a kubectl pointed at it through a generated kubeconfig, with its own cache dir. */
export async function withKubectl(opts: EmulatorOptions = {}): Promise<{ k: Client; kubectl: Kubectl }> {
  const k = await emulator({ tls: true, logIntervalMs: 100, ...opts })
  const dir = scratch()
  const kubeconfig = join(dir, 'config')
  await Bun.write(kubeconfig, k.emulator.kubeconfig())
  const env = { ...process.env, HOME: dir, KUBECONFIG: kubeconfig }
  const spawn = (args: string[], stdin?: string) =>
    Bun.spawn([KUBECTL, '--cache-dir', join(dir, 'cache'), ...args], {
      env,
      stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      stdout: 'pipe',
      stderr: 'pipe',
    })
  return {
    k,
    kubectl: {
      kubeconfig,
      env,
      spawn: (args) => spawn(args),
      async run(args, stdin) {
        const p = spawn(args, stdin)
        const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
        return { code, stdout, stderr }
      },
    },
  }
}

/** Reads newline-delimited watch events until `count` arrived, the stream ended, or the time ran out; `ended` tells whether the server closed it. */
export async function readWatchEvents(res: Response, count: number, timeoutMs = 3000): Promise<{ events: any[]; ended: boolean }> {
  const reader = res.body!.getReader()
  const events: any[] = []
  let buffer = ''
  let ended = false
  const deadline = Date.now() + timeoutMs
  while (events.length < count && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => undefined)])
    if (!chunk) break
    if (chunk.done) {
      ended = true
      break
    }
    buffer += new TextDecoder().decode(chunk.value)
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim()
      buffer = buffer.slice(nl + 1)
      if (line) events.push(JSON.parse(line))
    }
  }
  if (!ended) ended = (await Promise.race([reader.read(), Bun.sleep(300).then(() => undefined)]))?.done === true
  reader.cancel().catch(() => {})
  return { events, ended }
}
