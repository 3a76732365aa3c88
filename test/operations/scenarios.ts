import { Database as BunSqlite } from 'bun:sqlite'
import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { startServer } from '../support/process'
import { eventually } from '../support/wait'
import { cli, type Program, SOURCES, sealedSecretsProbe } from './support'

/**
 * Backup and restore as an operator runs them (docs/operations.md, "Backup and restore"), shared
 * by the source suite and the built binary's smoke suite.
 */

const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0,
])

export interface FirstInstance {
  backupDir: string
  token: string
  systemAccount: string
  avatarPath: string
}

const orgCount = (dbPath: string) => {
  const db = new BunSqlite(dbPath, { readonly: true })
  try {
    expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM org_details').get()!.n
  } finally {
    db.close()
  }
}

/** Requests to one running server, by path (the smoke suite's server speaks TLS with its own CA). */
export type ServerFetch = (path: string, init?: RequestInit) => Promise<Response>

/** Plain fetch to the server at `base`. */
export const fetchFrom =
  (base: string): ServerFetch =>
  (path, init) =>
    fetch(`${base}${path}`, init)

/**
 * On the running server that `api` reaches, over `dataDir`: a token, an avatar and sealed secrets, then
 * `backup` while organizations are being created. The backup holds a consistent database with
 * every organization acknowledged before it began and none that was not yet acknowledged when it ended.
 */
export async function backupDuringWrites(api: ServerFetch, dataDir: string, program: Program = SOURCES): Promise<FirstInstance> {
  const env = { PLATFORM_DATA_DIR: dataDir }
  const token = cli(['admin', 'create-token', '--username', 'admin'], env, program).stdout.trim()
  expect(token).toMatch(/^[0-9a-f]{40}$/)
  const auth = { authorization: `token ${token}` }
  const form = new FormData()
  form.append('avatar', new Blob([PNG], { type: 'image/png' }))
  expect((await api('/api/v1/user/settings/avatar', { method: 'POST', headers: auth, body: form })).status).toBe(200)
  const avatarPath = new URL((await (await api('/api/v1/user', { headers: auth })).json()).avatar_url).pathname
  const systemAccount = sealedSecretsProbe(dataDir, program)

  let acknowledged = 0
  let writing = true
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      const res = await api('/api/v1/orgs', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: `org-${i}` }),
      })
      expect(res.status).toBe(201)
      acknowledged++
    }
  })()
  await eventually(() => acknowledged >= 5, 30_000) // the writes are under way before the backup starts
  const backupDir = join(tempDir(), 'backup')
  const before = acknowledged
  const child = Bun.spawn([...program.command, 'backup', backupDir], {
    env: { ...(program.bareEnv ? {} : process.env), ...env },
    cwd: program.cwd,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const code = await child.exited
  const after = acknowledged
  writing = false
  await writer
  expect({ code, stderr: await new Response(child.stderr).text() }).toEqual({ code: 0, stderr: '' })
  expect(await new Response(child.stdout).text()).toContain(`backup in ${backupDir}`)
  const inBackup = orgCount(join(backupDir, 'platform.db'))
  expect(inBackup).toBeGreaterThanOrEqual(before)
  expect(inBackup).toBeLessThanOrEqual(after + 1)
  expect(acknowledged).toBeGreaterThan(inBackup) // writes went on after the copy
  const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'))
  const paths = manifest.files.map((f: { path: string }) => f.path)
  expect(paths).toContain('platform.db')
  expect(paths).toContain('secret.key')
  expect(paths.some((p: string) => /charts|backups|tools|sandbox/.test(p))).toBe(false)
  return { backupDir, token, systemAccount, avatarPath }
}

/** `restore` into a new data dir, then a second server on it: the first one's token, avatar and sealed secrets work there. */
export async function restoredInstanceServes(first: FirstInstance, program: Program = SOURCES): Promise<void> {
  const dataDir = join(tempDir(), 'restored')
  const restored = cli(['restore', first.backupDir], { PLATFORM_DATA_DIR: dataDir }, program)
  expect(restored.stderr).toBe('')
  expect(restored.code).toBe(0)
  expect(sealedSecretsProbe(dataDir, program)).toBe(first.systemAccount)
  const second = await startServer(dataDir, {}, { program: program.command, bareEnv: program.bareEnv, cwd: program.cwd })
  try {
    const me = await fetch(`${second.base}/api/v1/user`, { headers: { authorization: `token ${first.token}` } })
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('admin')
    const avatar = await fetch(`${second.base}${first.avatarPath}`)
    expect(avatar.status).toBe(200)
    expect(new Uint8Array(await avatar.arrayBuffer())).toEqual(PNG)
  } finally {
    second.child.kill('SIGTERM')
    await second.child.exited
  }
}
