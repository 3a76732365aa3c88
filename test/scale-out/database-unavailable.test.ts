import { Database as BunSqlite } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { Messages } from '../../src/http/errors'
import { makeTestApp } from '../support/app'

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
