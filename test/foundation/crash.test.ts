import { Database as BunSqlite } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { tempDir } from '../support/app'
import { createTokenOnCommandLine, startServer } from '../support/process'
import { eventually } from '../support/wait'

/**
 * A request the server holds: its head is sent with `Expect: 100-continue` and this resolves once
 * the server answered `100 Continue` (it has the request); `finish` sends the body and resolves
 * with the final status.
 */
async function heldRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ finish(): Promise<number> }> {
  const { hostname, port } = new URL(base)
  let reply = ''
  let closed = false
  let onData = () => {}
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, chunk) {
        reply += new TextDecoder().decode(chunk)
        onData()
      },
      close() {
        closed = true
        onData()
      },
    },
  })
  /** The first match of `pattern` in the reply; a connection closed without it fails the test. */
  const replied = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      onData = () => {
        const match = pattern.exec(reply)
        if (match) resolve(match)
        else if (closed) reject(new Error(`the server closed the connection after ${JSON.stringify(reply)}`))
      }
      onData()
    })
  const head = Object.entries({ ...headers, host: hostname, 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`)
  await replied(/^HTTP\/1\.1 100 /)
  return {
    async finish() {
      socket.write(body)
      const [, status] = await replied(/\r\n\r\nHTTP\/1\.1 (\d{3}) /)
      socket.end()
      return Number(status)
    },
  }
}

/**
 * Starts a server, runs `writers` concurrent loops of `write` (each call named by a fresh name, sent
 * as its X-Request-Id) and kills it with SIGKILL once more than `ackedBeforeKill` were answered
 * `status`; restarts it once over the same data (recovery), checks integrity, and hands back the
 * acknowledged names and the database, read-only.
 */
async function killDuringWrites(
  write: (base: string, token: string, name: string) => Promise<Response>,
  options: {
    writers: number
    ackedBeforeKill: number
    status: number
    env?: Record<string, string>
    setUp?: (base: string, token: string) => Promise<void>
  },
): Promise<{ acked: string[]; db: BunSqlite }> {
  const dataDir = tempDir()
  const first = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1', ...options.env })
  const token = createTokenOnCommandLine(dataDir, 'admin')
  await options.setUp?.(first.base, token)
  const acked: string[] = []
  let stop = false
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `w${w}-u${i}`
      try {
        if ((await write(first.base, token, name)).status === options.status) acked.push(name)
      } catch {
        return // the connection died with the server
      }
    }
  }
  const writers = Array.from({ length: options.writers }, (_, w) => writer(w))
  // Killed mid-stream once writes are flowing, however fast this machine and driver take them (the count below fails if they never did).
  await eventually(() => acked.length > options.ackedBeforeKill, 20_000).catch(() => undefined)
  first.child.kill('SIGKILL')
  await first.child.exited
  stop = true
  await Promise.all(writers)
  expect(acked.length).toBeGreaterThan(options.ackedBeforeKill)

  const second = await startServer(dataDir)
  second.child.kill('SIGTERM')
  expect(await second.child.exited).toBe(0)
  const db = new BunSqlite(join(dataDir, 'platform.db'), { readonly: true })
  expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
  return { acked, db }
}

const post = (base: string, token: string, path: string, name: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json', 'x-request-id': name },
    body: JSON.stringify(body),
  })

/** The request ids of the allowed audit events of `route`, or of every proxied call (docs/decisions.md §8). */
const auditedRequests = (db: BunSqlite, route: string | 'kubernetes') =>
  new Set(
    (
      db
        .query(
          `SELECT request_id FROM audit_events WHERE ${route === 'kubernetes' ? "kind = 'kubernetes'" : 'route = ?'} AND result = 'allowed'`,
        )
        .all(...(route === 'kubernetes' ? [] : [route])) as { request_id: string }[]
    ).map((r) => r.request_id),
  )

test('kill -9 under concurrent writers → every acknowledged write is there after restart with its audit event; integrity ok', async () => {
  const { acked, db } = await killDuringWrites(
    (base, token, name) =>
      post(base, token, '/api/v1/admin/users', name, { username: name, email: `${name}@example.com`, password: 'password123' }),
    { writers: 8, ackedBeforeKill: 5, status: 201 },
  )
  const names = new Set((db.query('SELECT lower_name FROM users').all() as { lower_name: string }[]).map((r) => r.lower_name))
  const audited = auditedRequests(db, '/api/v1/admin/users')
  db.close()
  expect(acked.filter((name) => !names.has(name))).toEqual([])
  expect(acked.filter((name) => !audited.has(name))).toEqual([])
}, 60_000)

test('kill -9 during a stream of cheap writes → every change that committed, answered or not, has its audit event', async () => {
  // Org creation hashes no password: many changes are between their commit and their answer when the kill lands.
  const { acked, db } = await killDuringWrites((base, token, name) => post(base, token, '/api/v1/orgs', name, { username: name }), {
    writers: 16,
    ackedBeforeKill: 200,
    status: 201,
  })
  const orgs = (db.query("SELECT lower_name FROM users WHERE type = 1 AND lower_name LIKE 'w%'").all() as { lower_name: string }[]).map(
    (r) => r.lower_name,
  )
  const audited = auditedRequests(db, '/api/v1/orgs')
  db.close()
  expect(acked.filter((name) => !orgs.includes(name))).toEqual([])
  // The event is written in the change's own transaction, so no org exists without it.
  expect(orgs.filter((name) => !audited.has(name))).toEqual([])
}, 60_000)

test('kill -9 during proxied writes → every create the member confirmed and we answered has its kubernetes event', async () => {
  const member = await startEmulator({ tls: true })
  try {
    const configMaps = '/api/v1/clusters/admin/dev/k8s/api/v1/namespaces/default/configmaps'
    const { acked, db } = await killDuringWrites(
      (base, token, name) => post(base, token, configMaps, name, { metadata: { name }, data: { a: '1' } }),
      {
        writers: 16,
        ackedBeforeKill: 100,
        status: 201,
        env: { PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' },
        setUp: async (base, token) => {
          const imported = await post(base, token, '/api/v1/clustersv2/admin/import', 'import-dev', {
            name: 'dev',
            server: member.url,
            caData: Buffer.from(member.caCertPem!).toString('base64'),
            token: member.token,
          })
          expect(imported.status).toBe(201)
        },
      },
    )
    const audited = auditedRequests(db, 'kubernetes')
    db.close()
    // The member made every one of them; what we answered, we had recorded first.
    expect(acked.filter((name) => !audited.has(name))).toEqual([])
  } finally {
    await member.stop()
  }
}, 60_000)

test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const dataDir = tempDir()
  const server = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
  const token = createTokenOnCommandLine(dataDir, 'admin')
  const inFlight = await heldRequest(
    server.base,
    'POST',
    '/api/v1/admin/users',
    { authorization: `token ${token}`, 'content-type': 'application/json' },
    JSON.stringify({ username: 'late', email: 'late@example.com', password: 'password123' }),
  )
  server.child.kill('SIGTERM')
  expect(await inFlight.finish()).toBe(201)
  expect(await server.child.exited).toBe(0)
}, 30_000)
