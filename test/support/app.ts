import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type App, closeDeps, createApp, openDeps } from '../../src/app'
import { type Config, loadConfig } from '../../src/config'
import type { Deps } from '../../src/deps'
import { hashPassword } from '../../src/identity/passwords'
import { insertUser, type UserRow } from '../../src/identity/store'
import { mintToken } from '../../src/identity/tokens/service'
import { memoryLogger } from '../../src/logger'
import { TestClock } from './clock'
import { atRunEnd } from './run-end'
import { eventually } from './wait'

/** Every test user's password; its argon2 hash is computed once per test process. */
export const PASSWORD = 'correct horse battery'
let passwordHash: Promise<string> | undefined

/** A fresh temporary data dir, removed when the test run ends (after every app and server using it closed). */
export function tempDir(prefix = 'platform-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  atRunEnd(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface TestUser {
  user: UserRow
  /** An access token with scope `all`. */
  token: string
  name: string
}

export interface RequestOptions {
  body?: unknown
  headers?: Record<string, string>
  /** Send as `Authorization: token <value>`. */
  token?: string
}

export interface TestApp {
  app: App
  deps: Deps
  config: Config
  /** The app's clock (deps.clock): `t.clock.advance(ms)` reaches an expiry without sleeping. */
  clock: TestClock
  logs: string[]
  /** Sends a request to the app in process (`http://localhost` + path). */
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>
  /** Creates individual users with password PASSWORD and an `all` token each. */
  users(...names: string[]): Promise<TestUser[]>
  /** The first site admin (created with the app), with a token. */
  admin(): Promise<TestUser>
  /** Requests authenticated with the given user's token. */
  as(who: TestUser): {
    get(path: string, headers?: Record<string, string>): Promise<Response>
    delete(path: string, body?: unknown): Promise<Response>
    send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>
  }
  /** The parsed log lines, once the line for `requestId` has been written (logging follows the response). */
  logFor(requestId: string | null): Promise<Record<string, unknown>[]>
  /** Starts the app on a random loopback port; stopped when the test file ends. */
  listen(): Promise<string>
}

/** The request a test means: `token` as `Authorization: token`, an object body as JSON (text, bytes and forms as they are). */
export function testRequest(base: string, method: string, path: string, opts: RequestOptions = {}): Request {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.token) headers.authorization = `token ${opts.token}`
  let body: BodyInit | undefined
  if (opts.body instanceof FormData || opts.body instanceof Uint8Array || typeof opts.body === 'string') body = opts.body as BodyInit
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  return new Request(`${base}${path}`, { method, headers, body, redirect: 'manual' })
}

/** Requests carrying `who`'s token, over whatever `request` sends them with. */
export const actingAs =
  (request: TestApp['request']): TestApp['as'] =>
  (who) => ({
    get: (path, headers) => request('GET', path, { token: who.token, headers }),
    delete: (path, body) => request('DELETE', path, { token: who.token, body }),
    send: (method, path, body, headers) => request(method, path, { token: who.token, body, headers }),
  })

/** Builds an app on a fresh data dir with its own database, as `serve` would. */
export async function makeTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = tempDir()
  // `npm run test:libsql` runs every app test once more through the libSQL driver.
  const driver = process.env.PLATFORM_DATABASE_DRIVER ? { PLATFORM_DATABASE_DRIVER: process.env.PLATFORM_DATABASE_DRIVER } : {}
  // Plain HTTP unless a test asks for TLS: `serve`'s own CA is for a real start (docs/decisions.md §12).
  const config = loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_TLS: 'off', ...driver, ...env })
  const log = memoryLogger()
  const clock = new TestClock()
  const deps = await openDeps(config, log, clock)
  const app = createApp(deps)
  passwordHash ??= hashPassword(PASSWORD)
  let adminUser: TestUser | undefined

  const request = (method: string, path: string, opts: RequestOptions = {}) =>
    app.handle(testRequest('http://localhost', method, path, opts))

  const makeUser = async (name: string, isAdmin: boolean): Promise<TestUser> => {
    const user = await deps.db.write(async (tx) =>
      insertUser(tx, {
        name,
        lowerName: name.toLowerCase(),
        email: `${name.toLowerCase()}@example.com`,
        passwordHash: await passwordHash!,
        isAdmin,
      }),
    )
    const { plaintext } = await mintToken(deps.db, user.id, { name: 'test', scopes: ['all'] })
    return { user, token: plaintext, name }
  }

  const t: TestApp = {
    app,
    deps,
    config,
    clock,
    logs: log.lines,
    request,
    users: (...names) => Promise.all(names.map((name) => makeUser(name, false))),
    admin: async () => (adminUser ??= await makeUser('root', true)),
    as: actingAs(request),
    async logFor(requestId) {
      const parsed = () => log.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      await eventually(() => parsed().some((l) => l.requestId === requestId)).catch(() => undefined)
      return parsed()
    },
    async listen() {
      const server = app.listen({ port: 0, hostname: '127.0.0.1', reusePort: false })
      afterAll(() => server.stop())
      return `http://127.0.0.1:${server.server!.port}`
    },
  }
  afterAll(() => closeDeps(deps))
  return t
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

/** A request as `user` signed in by Basic with the test password. */
export const asBasic = (t: TestApp, user: string, method: string, path: string, body?: unknown) =>
  t.request(method, path, { headers: { authorization: basic(user, PASSWORD) }, body })
