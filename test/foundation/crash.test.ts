import { expect, test } from 'bun:test'
import { Database as BunSqlite } from 'bun:sqlite'
import { join, resolve } from 'node:path'
import { tempDir } from '../support/app'

const MAIN = resolve(import.meta.dir, '../../src/main.ts')

/** Starts `serve` on a random port over `dataDir`; resolves once it listens. */
async function startServer(dataDir: string) {
  const child = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: { ...process.env, PLATFORM_ADMIN_PASSWORD: 'admin-password-1', PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_REQUEST_LOG: 'false' },
    stdout: 'pipe', stderr: 'pipe',
  })
  const reader = child.stdout.getReader()
  let seen = ''
  while (!/"event":"listening"/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited before listening: ${seen} ${await new Response(child.stderr).text()}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const port = /"url":"http:\/\/[^:]+:(\d+)"/.exec(seen)![1]
  return { child, base: `http://127.0.0.1:${port}` }
}

async function adminToken(dataDir: string): Promise<string> {
  const run = Bun.spawnSync([process.execPath, MAIN, 'admin', 'create-token', '--username', 'admin'], {
    env: { ...process.env, PLATFORM_DATA_DIR: dataDir },
  })
  expect(run.exitCode).toBe(0)
  return run.stdout.toString().trim()
}

test('kill -9 under concurrent writers → every acknowledged write is there after restart, integrity ok', async () => {
  const dataDir = tempDir()
  const first = await startServer(dataDir)
  const token = await adminToken(dataDir)
  const acked: string[] = []
  let stop = false
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `w${w}-u${i}`
      try {
        const res = await fetch(`${first.base}/api/v1/admin/users`, {
          method: 'POST',
          headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ username: name, email: `${name}@example.com`, password: 'password123' }),
        })
        if (res.status === 201) acked.push(name)
      } catch {
        return // the connection died with the server
      }
    }
  }
  const writers = Array.from({ length: 8 }, (_, w) => writer(w))
  await Bun.sleep(1200)
  first.child.kill('SIGKILL')
  await first.child.exited
  stop = true
  await Promise.all(writers)
  expect(acked.length).toBeGreaterThan(5)

  const second = await startServer(dataDir)
  second.child.kill('SIGTERM')
  expect(await second.child.exited).toBe(0)
  const db = new BunSqlite(join(dataDir, 'platform.db'), { readonly: true })
  expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
  const names = new Set((db.query('SELECT lower_name FROM users').all() as { lower_name: string }[]).map((r) => r.lower_name))
  db.close()
  expect(acked.filter((name) => !names.has(name))).toEqual([])
}, 60_000)

test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const dataDir = tempDir()
  const server = await startServer(dataDir)
  const token = await adminToken(dataDir)
  const inFlight = fetch(`${server.base}/api/v1/admin/users`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'late', email: 'late@example.com', password: 'password123' }),
  })
  await Bun.sleep(20) // the argon2 hash keeps the request busy for tens of milliseconds
  server.child.kill('SIGTERM')
  expect((await inFlight).status).toBe(201)
  expect(await server.child.exited).toBe(0)
}, 30_000)
