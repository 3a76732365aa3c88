import { Database as BunSqlite } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { basic, tempDir } from '../support/app'
import { MAIN, startServer } from '../support/process'

const ADMIN_PASSWORD = 'first-admin-password'

const userCount = (dataDir: string) => {
  const db = new BunSqlite(join(dataDir, 'platform.db'), { readonly: true })
  try {
    return (db.query('SELECT count(*) AS n FROM users').get() as { n: number }).n
  } finally {
    db.close()
  }
}

describe('serve with no TLS settings: HTTPS with a CA of its own (docs/decisions.md §12)', () => {
  test('the config: generated files in the data dir and an https public URL; PLATFORM_TLS=off or a public URL → plain HTTP', () => {
    const dataDir = tempDir()
    const config = loadConfig({ PLATFORM_DATA_DIR: dataDir, PORT: '3443' })
    expect(config.tls).toEqual({
      certFile: join(dataDir, 'tls', 'server.crt'),
      keyFile: join(dataDir, 'tls', 'server.key'),
      caFile: join(dataDir, 'tls', 'ca.crt'),
      generated: true,
    })
    expect(config.publicUrl).toBe('https://localhost:3443')
    expect(loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_TLS: 'off' }).tls).toBeUndefined()
    expect(loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_PUBLIC_URL: 'https://platform.example.com' }).tls).toBeUndefined()
    expect(() => loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_TLS: 'on' })).toThrow('PLATFORM_TLS')
  })

  test('the first start makes the CA once and prints its path and fingerprint; the sandbox kubeconfig alone takes kubectl there', async () => {
    const dataDir = tempDir()
    const server = await startServer(dataDir, {
      PLATFORM_TLS: '',
      PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
      PLATFORM_SANDBOX_CLUSTER: 'true',
    })
    expect(server.base).toStartWith('https://')
    const caPem = readFileSync(join(dataDir, 'tls', 'ca.crt'), 'utf8')
    const fingerprint = new X509Certificate(caPem).fingerprint256
    expect(server.started).toContain(`"caFile":"${join(dataDir, 'tls', 'ca.crt')}","caFingerprint":"SHA256 ${fingerprint}"`)
    const status = Bun.spawnSync([process.execPath, MAIN, 'status', '--data-dir', dataDir], { env: { ...process.env, PLATFORM_TLS: '' } })
    expect(status.stdout.toString()).toContain(`CA ${join(dataDir, 'tls', 'ca.crt')}`)
    expect(status.stdout.toString()).toContain(fingerprint)
    const res = await fetch(`${server.base}/api/v1/clustersv2/admin/sandbox/kubeconfig`, {
      headers: { authorization: basic('admin', ADMIN_PASSWORD) },
      tls: { ca: caPem },
    } as RequestInit)
    expect(res.status).toBe(200)
    const kubeconfig = join(tempDir(), 'kubeconfig')
    // The kubeconfig names https://localhost:<port>: the certificate names localhost.
    writeFileSync(kubeconfig, (await res.text()).replace(/https:\/\/localhost:\d+/, server.base.replace('127.0.0.1', 'localhost')))
    const kubectl = Bun.spawnSync([loadConfig().kubectlPath, '--kubeconfig', kubeconfig, 'get', 'pods', '-A', '-o', 'name'])
    expect(kubectl.stderr.toString()).toBe('')
    expect(kubectl.stdout.toString()).toContain('pod/')
    server.child.kill('SIGTERM')
    await server.child.exited
    const again = await startServer(dataDir, { PLATFORM_TLS: '' })
    expect(readFileSync(join(dataDir, 'tls', 'ca.crt'), 'utf8')).toBe(caPem)
    again.child.kill('SIGTERM')
    await again.child.exited
  }, 60_000)
})

describe('a start that cannot listen changes nothing', () => {
  test('a port already taken → exit 2, one line, no admin created; the next start prints the password', async () => {
    const other = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('other') })
    const dataDir = tempDir()
    try {
      const refused = Bun.spawn(
        [process.execPath, MAIN, 'serve', '--port', String(other.port), '--host', '127.0.0.1', '--data-dir', dataDir],
        {
          env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_REQUEST_LOG: 'false' },
          stdout: 'pipe',
          stderr: 'pipe',
        },
      )
      expect(await refused.exited).toBe(2)
      const stderr = await new Response(refused.stderr).text()
      expect(stderr.trim().split('\n')).toEqual([`error: port ${other.port} on 127.0.0.1 is already in use (another server running?)`])
      expect(userCount(dataDir)).toBe(0)
    } finally {
      other.stop(true)
    }
    const started = await startServer(dataDir)
    started.child.kill('SIGTERM')
    await started.child.exited
    expect(await started.stderr()).toMatch(/site admin "\w+" password \(shown once\): \S+/)
    expect(userCount(dataDir)).toBe(1)
  }, 60_000)
})
