import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { importBody } from '../clusters/support'
import { basic, tempDir } from '../support/app'
import { MAIN, startServer } from '../support/process'

/**
 * Two machines on one database: two real `serve` processes whose data dirs differ (nothing on one
 * machine's disk reaches the other) and whose DATABASE_URL names one database, as N machines on
 * one libSQL server run. What one serves from its disk the other could not: so it must all be in
 * the database, or sealed with the key both share.
 */

const database = `file:${join(tempDir(), 'shared.db')}`
const SECRET_KEY = 'a1'.repeat(32)
const ADMIN_PASSWORD = 'admin-password-1'
const env = {
  DATABASE_URL: database,
  PLATFORM_SECRET_KEY: SECRET_KEY,
  PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
  PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true',
}
const a = await startServer(tempDir(), env)
const b = await startServer(tempDir(), env)
const member = await startEmulator({ tls: true, seed: true })
afterAll(async () => {
  for (const server of [a, b]) server.child.kill('SIGTERM')
  await Promise.all([a.child.exited, b.child.exited, member.stop()])
})

const adminToken: string = (
  await (
    await fetch(`${a.base}/api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'machines', scopes: ['all'] }),
    })
  ).json()
).sha1
const asAdmin = (server: { base: string }, method: string, path: string, body?: unknown) =>
  fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `token ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0,
])

describe('two machines on one database', () => {
  test('an avatar uploaded on A → B serves the same image', async () => {
    const upload = new FormData()
    upload.append('avatar', new Blob([PNG]))
    const uploaded = await fetch(`${a.base}/api/v1/user/settings/avatar`, {
      method: 'POST',
      headers: { authorization: `token ${adminToken}` },
      body: upload,
    })
    expect(uploaded.status).toBe(200)
    const served = await fetch(`${b.base}/avatars/admin`)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG)
  })

  test("a cluster imported on A (its credential sealed with the shared key) → B's proxy reaches it", async () => {
    expect((await asAdmin(a, 'POST', '/api/v1/orgs', { username: 'machines' })).status).toBe(201)
    const imported = await asAdmin(a, 'POST', '/api/v1/clustersv2/machines/import', importBody(member, 'prod'))
    expect(imported.status).toBe(201)
    expect((await asAdmin(b, 'GET', '/api/v1/clusters/machines/prod/k8s/api/v1/namespaces')).status).toBe(200)
  })

  test('a third machine with another secret key → refuses to start (exit 2, naming PLATFORM_SECRET_KEY), serves nothing', async () => {
    const child = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', tempDir()], {
      env: { ...process.env, ...env, PLATFORM_SECRET_KEY: 'b2'.repeat(32), PLATFORM_SANDBOX_CLUSTER: 'false' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()])
    expect(code).toBe(2)
    expect(stderr).toContain('PLATFORM_SECRET_KEY')
    expect(stdout).not.toContain('"listening"')
  }, 30_000)
})
