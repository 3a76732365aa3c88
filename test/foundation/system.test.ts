import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { localDatabaseFile } from '../../src/storage/database'
import { basic, makeTestApp, tempDir } from '../support/app'
import { startServer } from '../support/process'

describe('system routes', () => {
  test('GET /api/v1/version with a token → version, commit and build date', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).get('/api/v1/version')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/)
    expect(body.commit).toMatch(/^([0-9a-f]{40}|unknown)$/)
    expect(Number.isNaN(Date.parse(body.buildDate))).toBe(false)
  })

  test('GET /api/v1/version anonymously → 401', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/api/v1/version')).status).toBe(401)
  })

  test('GET /readyz → 200 while the database answers, 503 once it is gone', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/readyz')).status).toBe(200)
    await t.deps.db.close()
    const res = await t.request('GET', '/readyz')
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ status: 'unavailable' })
    expect((await t.request('GET', '/healthz')).status).toBe(200)
  })

  test('the database file overwritten while serving → /readyz 503 every time, one log line saying why, the server answers on', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/readyz')).status).toBe(200)
    const file = localDatabaseFile(t.config.databaseUrl)!
    writeFileSync(file, crypto.getRandomValues(new Uint8Array(8192)))
    for (let probe = 0; probe < 3; probe++) expect((await t.request('GET', '/readyz')).status).toBe(503)
    const said = t.logs.filter((line) => line.includes('the database cannot be read'))
    expect(said).toHaveLength(1)
    expect(JSON.parse(said[0]!)).toMatchObject({ level: 'error', reason: `${file} does not start with the SQLite header` })
    expect((await t.request('GET', '/healthz')).status).toBe(200)
  })
})

describe('first start', () => {
  test('without PLATFORM_ADMIN_PASSWORD the generated password is printed once and signs in', async () => {
    const dataDir = tempDir()
    const first = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: '' })
    first.child.kill('SIGTERM')
    await first.child.exited
    const printed = /password \(shown once\): (\S+)/.exec(await first.stderr())
    expect(printed).not.toBeNull()

    const second = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: '' })
    const res = await fetch(`${second.base}/api/v1/user`, { headers: { authorization: basic('admin', printed![1]) } })
    second.child.kill('SIGTERM')
    await second.child.exited
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ login: 'admin', is_admin: true })
    expect(await second.stderr()).not.toContain('shown once')
  }, 30_000)
})
