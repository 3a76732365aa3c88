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

const runServe = async (args: string[], env: Record<string, string>) => {
  const child = Bun.spawn([process.execPath, MAIN, 'serve', ...args], {
    env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_REQUEST_LOG: 'false', ...env },
    stdin: 'ignore', stdout: 'pipe', stderr: 'pipe',
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  const code = await child.exited
  clearTimeout(timer)
  return { code, stderr: await new Response(child.stderr).text() }
}

test('an operator points PLATFORM_DATA_DIR where no directory can be made → one line naming it, exit 2, no stack trace', async () => {
  const blocker = join(tempDir(), 'a-file')
  await Bun.write(blocker, 'not a directory')
  const { code, stderr } = await runServe(['--port', '0', '--host', '127.0.0.1'], { PLATFORM_DATA_DIR: join(blocker, 'data') })
  expect(code).toBe(2)
  expect(stderr).toContain('PLATFORM_DATA_DIR')
  expect(stderr).not.toContain('    at ')
  expect(stderr.trim().split('\n')).toHaveLength(1)
})

test('an operator asks serve to listen on an address it cannot bind → one line naming host and port, exit 1, no stack trace', async () => {
  const { code, stderr } = await runServe(['--port', '0', '--host', '256.1.1.1', '--data-dir', tempDir()], { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
  expect(code).toBe(1)
  expect(stderr).toContain('256.1.1.1')
  expect(stderr).not.toContain('    at ')
  expect(stderr.trim().split('\n')).toHaveLength(1)
})
