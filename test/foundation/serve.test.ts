import { Database as BunSqlite } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { createTokenOnCommandLine, MAIN, startServer } from '../support/process'

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
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
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
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
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
  const { code, stderr } = await runServe(['--port', '0', '--host', '256.1.1.1', '--data-dir', tempDir()], {
    PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
  })
  expect(code).toBe(1)
  expect(stderr).toContain('256.1.1.1')
  expect(stderr).not.toContain('    at ')
  expect(stderr.trim().split('\n')).toHaveLength(1)
})

const sandboxOf = (dataDir: string) => {
  const kubeconfig = readFileSync(join(dataDir, 'sandbox.kubeconfig'), 'utf8')
  return {
    server: /server: (\S+)/.exec(kubeconfig)![1],
    token: /token: (\S+)/.exec(kubeconfig)![1],
    ca: Buffer.from(/certificate-authority-data: (\S+)/.exec(kubeconfig)![1], 'base64').toString('utf8'),
  }
}

test('SIGTERM while a kubectl-style watch and a logs -f stream on the sandbox are open → the streams end and the server exits 0 within the grace period', async () => {
  const dataDir = tempDir()
  const server = await startServer(dataDir, {
    PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
    PLATFORM_SANDBOX_CLUSTER: 'true',
    PLATFORM_SHUTDOWN_GRACE_SECONDS: '5',
  })
  const sandbox = sandboxOf(dataDir)
  const open = (path: string) =>
    fetch(`${sandbox.server}${path}`, { headers: { authorization: `Bearer ${sandbox.token}` }, tls: { ca: sandbox.ca } })
  const watch = await open('/api/v1/namespaces/demo/configmaps?watch=1')
  const pods = await (await open('/api/v1/namespaces/demo/pods?labelSelector=app%3Dapi')).json()
  const logs = await open(`/api/v1/namespaces/demo/pods/${pods.items[0].metadata.name}/log?follow=true`)
  expect([watch.status, logs.status]).toEqual([200, 200])
  const drain = (res: Response) =>
    res.text().then(
      () => 'ended',
      () => 'ended',
    )
  const streams = Promise.all([drain(watch), drain(logs)])
  const started = performance.now()
  server.child.kill('SIGTERM')
  expect(await server.child.exited).toBe(0)
  expect(performance.now() - started).toBeLessThan(5000)
  expect(await streams).toEqual(['ended', 'ended'])
}, 30_000)

test('kill -9 with the sandbox running, then a restart → still one sandbox row, pointed at the new emulator and Active', async () => {
  const dataDir = tempDir()
  const env = { PLATFORM_ADMIN_PASSWORD: 'admin-password-1', PLATFORM_SANDBOX_CLUSTER: 'true' }
  const first = await startServer(dataDir, env)
  const before = sandboxRows(dataDir)
  first.child.kill('SIGKILL')
  await first.child.exited
  const second = await startServer(dataDir, env)
  try {
    const after = sandboxRows(dataDir)
    expect(after).toHaveLength(1)
    expect(after[0].id).toBe(before[0].id)
    expect(after[0].server).toBe(sandboxOf(dataDir).server)
    expect(after[0].server).not.toBe(before[0].server)
    const token = createTokenOnCommandLine(dataDir, 'admin')
    const clusters = await (await fetch(`${second.base}/api/v1/user/clusters`, { headers: { authorization: `token ${token}` } })).json()
    expect(clusters.map((c: { name: string; status: { phase: string } }) => [c.name, c.status.phase])).toEqual([['sandbox', 'Active']])
  } finally {
    second.child.kill('SIGTERM')
    await second.child.exited
  }
}, 30_000)
