/** Test fixtures: an emulator per test on a random port, a client with its token and CA, polling, scratch dirs. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/kube-emulator'

export interface Client {
  emulator: Emulator
  /** fetch against the emulator with the admin token (or `token`) and its CA. */
  request(method: string, path: string, init?: { body?: unknown; headers?: Record<string, string>; token?: string | null }): Promise<Response>
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

export async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((e) => e.stop()))
}

/** Polls until `check` returns a truthy value (controllers reconcile asynchronously). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v) return v
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

/** A scratch directory (kubectl's HOME and cache, kubeconfig files). */
export const scratch = () => mkdtempSync(join(tmpdir(), 'kube-emulator-'))

export const KUBECTL = join(import.meta.dir, '../../.tools/bin/kubectl')
