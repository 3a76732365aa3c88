import { expect, test } from 'bun:test'
import { Database as BunSqlite } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { MAIN, startServer } from '../support/process'

const sandboxRows = (dataDir: string) => {
  const db = new BunSqlite(join(dataDir, 'platform.db'), { readonly: true })
  try {
    return db.query("SELECT id, server FROM clusters WHERE name = 'sandbox'").all() as { id: number; server: string }[]
  } finally {
    db.close()
  }
}

test('a second server on the same data dir and port → a one-line EADDRINUSE message, exit non-zero, and the first sandbox registration untouched', async () => {
  const dataDir = tempDir()
  const first = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1', PLATFORM_SANDBOX_CLUSTER: 'true' })
  try {
    const before = sandboxRows(dataDir)
    const kubeconfigBefore = readFileSync(join(dataDir, 'sandbox.kubeconfig'), 'utf8')
    const port = new URL(first.base).port
    const second = Bun.spawn([process.execPath, MAIN, 'serve', '--port', port, '--host', '127.0.0.1', '--data-dir', dataDir], {
      env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'true', PLATFORM_REQUEST_LOG: 'false' },
      stdin: 'ignore', stdout: 'pipe', stderr: 'pipe',
    })
    const code = await second.exited
    const stderr = await new Response(second.stderr).text()
    expect(code).not.toBe(0)
    expect(stderr).toContain(`port ${port}`)
    expect(stderr).toContain('in use')
    expect(stderr).not.toContain('    at ')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(sandboxRows(dataDir)).toEqual(before)
    expect(readFileSync(join(dataDir, 'sandbox.kubeconfig'), 'utf8')).toBe(kubeconfigBefore)
  } finally {
    first.child.kill('SIGTERM')
    await first.child.exited
  }
}, 30_000)
