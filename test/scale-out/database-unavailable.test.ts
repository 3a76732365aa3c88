import { Database as BunSqlite } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { Messages } from '../../src/http/errors'
import { makeTestApp, tempDir } from '../support/app'
import { freePort } from '../support/ports'
import { MAIN } from '../support/process'

test('another process holds the write lock past the busy wait → a write is 503 with Retry-After and leaves nothing; reads still answer; once free, the same write succeeds', async () => {
  // bun:sqlite: the libSQL driver waits inside SQLite, and a local libSQL connection whose wait failed stays unusable (docs/operations.md).
  const t = await makeTestApp({ PLATFORM_DATABASE_DRIVER: 'bun:sqlite' })
  const [alice] = await t.users('alice')
  const otherProcess = new BunSqlite(join(t.config.dataDir, 'platform.db'))
  otherProcess.run('BEGIN IMMEDIATE')
  try {
    const refused = await t.as(alice).send('POST', '/api/v1/orgs', { username: 'acme' })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect((await refused.json()).message).toBe(Messages.databaseUnavailable)
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(200)
    expect((await t.as(alice).get('/api/v1/orgs/acme')).status).toBe(404)
    expect((await t.request('GET', '/readyz')).status).toBe(200)
  } finally {
    otherProcess.run('ROLLBACK')
    otherProcess.close()
  }
  expect((await t.as(alice).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
}, 30_000)

test('DATABASE_URL naming a libSQL server nobody answers → serve exits 1 with one line naming the server (not its credentials), no stack', async () => {
  const url = `http://reader:hunter2@127.0.0.1:${freePort()}/?authToken=sekrit`
  const child = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--data-dir', tempDir()], {
    env: { ...process.env, DATABASE_URL: url, PLATFORM_DATABASE_DRIVER: '', PLATFORM_SANDBOX_CLUSTER: 'false' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()])
  expect(code).toBe(1)
  expect(stderr.trim().split('\n')).toEqual([
    expect.stringMatching(/^error: the database at DATABASE_URL \(http:\/\/127\.0\.0\.1:\d+\) cannot be reached: ECONNREFUSED/),
  ])
  expect(stderr).not.toMatch(/hunter2|sekrit/)
}, 30_000)
