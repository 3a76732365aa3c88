import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import puppeteer from 'puppeteer-core'
import YAML from 'yaml'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { CHROMIUM_FLAGS } from '../../src/usage/pdf/printer'
import { passwordStep } from '../console/support'
import { basic, tempDir } from '../support/app'
import { buildChart, serveHelmRepo } from '../support/charts'
import { freePort } from '../support/ports'
import { type RunningServer, startServer } from '../support/process'
import { eventually, readUntil } from '../support/wait'
import { hourly, requests } from '../usage/support'
import { backupDuringWrites, restoredInstanceServes, type ServerFetch } from './scenarios'
import { cli, type Program, REPO } from './support'
import { verifyUnit } from './systemd'

/**
 * The smoke suite of the built binary (docs/operations.md, "Install"): copied alone into an empty
 * directory and started with a bare environment whose PATH has no Bun, Node, Helm or kubectl, it
 * serves the README's first session, renders an order with the Helm it carries, prints a usage PDF
 * with Debian's Chromium, exposes metrics, and is backed up while it writes and restored.
 * `.ci/run` builds the binary and names it in PLATFORM_BINARY; without it this file builds one.
 */

// A build, Chromium and Helm from a cold start on a shared two-core machine.
setDefaultTimeout(120_000)

const ADMIN_PASSWORD = 'smoke-admin-password-1'
const METRICS_TOKEN = 'smoke-metrics-token-0123456789'
const ABSENT_PROGRAMS = ['bun', 'bunx', 'node', 'nodejs', 'npm', 'npx', 'helm', 'kubectl']

function binaryUnderTest(): string {
  if (process.env.PLATFORM_BINARY) return resolve(process.env.PLATFORM_BINARY)
  const out = join(tempDir('platform-build-'), 'platform-api')
  const build = Bun.spawnSync([process.execPath, join(REPO, 'scripts', 'build.ts'), '--outfile', out], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  return out
}

/** A PATH directory with every program of the system's but those named. */
function pathWithout(names: string[]): string {
  const dir = tempDir('platform-path-')
  for (const from of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'])
    for (const name of existsSync(from) ? readdirSync(from) : [])
      if (!names.includes(name) && !existsSync(join(dir, name))) symlinkSync(join(from, name), join(dir, name))
  return dir
}

interface Smoke {
  dir: string
  dataDir: string
  program: Program
  server: RunningServer
  api: ServerFetch
  token: string
}

let smoke: Smoke
const repo = serveHelmRepo([buildChart('demo', '0.2.0')])

beforeAll(async () => {
  const dir = tempDir('platform-binary-')
  const binary = join(dir, 'platform-api')
  copyFileSync(binaryUnderTest(), binary)
  chmodSync(binary, 0o755)
  const tlsDir = tempDir('platform-tls-')
  const port = freePort()
  const tls = await generateServerTls(['127.0.0.1'])
  writeFileSync(join(tlsDir, 'tls.crt'), tls.certPem)
  writeFileSync(join(tlsDir, 'tls.key'), tls.keyPem)
  writeFileSync(join(tlsDir, 'ca.crt'), tls.caCertPem)
  const dataDir = join(dir, 'data')
  const program: Program = { command: [binary], bareEnv: true, cwd: dir }
  const server = await startServer(
    dataDir,
    {
      PATH: pathWithout(ABSENT_PROGRAMS),
      PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
      PLATFORM_PUBLIC_URL: `https://127.0.0.1:${port}`,
      PLATFORM_TLS_CERT_FILE: join(tlsDir, 'tls.crt'),
      PLATFORM_TLS_KEY_FILE: join(tlsDir, 'tls.key'),
      PLATFORM_TLS_CA_FILE: join(tlsDir, 'ca.crt'),
      PLATFORM_SANDBOX_CLUSTER: 'true',
      PLATFORM_MODES: 'billing',
      PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true',
      PLATFORM_METRICS_TOKEN: METRICS_TOKEN,
    },
    // Started in a beforeAll: the file's afterAll below stops it.
    { program: program.command, bareEnv: true, cwd: dir, port, stoppedByCaller: true },
  )
  const api: ServerFetch = (path, init) => fetch(`${server.base}${path}`, { ...init, tls: { ca: tls.caCertPem } })
  smoke = { dir, dataDir, program, server, api, token: '' }
})

afterAll(async () => {
  repo.stop()
  smoke?.server.child.kill('SIGTERM')
  await smoke?.server.child.exited
})

const asAdmin = (init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { authorization: `token ${smoke.token}`, 'content-type': 'application/json', ...init.headers },
})

describe('the built binary, alone in an empty directory', () => {
  test('--version names the version and the commit; help lists the commands; the directory holds the binary and its data dir only', () => {
    const version = cli(['--version'], {}, smoke.program)
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^platform-api \d+\.\d+\.\d+ \(commit [0-9a-f]{40}, built \S+\)\n$/)
    const help = cli(['help'], {}, smoke.program)
    for (const command of ['serve', 'backup', 'restore', 'systemd-unit', 'admin create-token'])
      expect(help.stdout).toContain(`  ${command} `)
    expect(readdirSync(smoke.dir).sort()).toEqual(['data', 'platform-api'])
    const path = pathWithout(ABSENT_PROGRAMS)
    for (const name of ABSENT_PROGRAMS) expect(Bun.which(name, { PATH: path })).toBeNull()
  })

  test("the binary's size that README.md and docs/operations.md state is the build's (to 1 MiB)", () => {
    const built = statSync(smoke.program.command[0]!).size / 2 ** 20
    const stated = [
      /one file to copy[^(]*\((\d+(?:\.\d+)?) MiB;/.exec(readFileSync(join(REPO, 'README.md'), 'utf8'))?.[1],
      /the file is (\d+(?:\.\d+)?) MiB/.exec(readFileSync(join(REPO, 'docs/operations.md'), 'utf8'))?.[1],
    ].map(Number)
    for (const mib of stated) expect({ stated: mib, near: Math.abs(mib - built) <= 1 }).toEqual({ stated: mib, near: true })
  })

  test('the first admin signs in with the configured password and creates a token; GET /user answers with it', async () => {
    const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`
    const created = await smoke.api('/api/v1/users/admin/tokens', {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'smoke', scopes: ['all'] }),
    })
    expect(created.status).toBe(201)
    smoke.token = (await created.json()).sha1
    const me = await smoke.api('/api/v1/user', asAdmin())
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('admin')
  })

  test('the sandbox cluster through the proxy with the real kubectl: list namespaces, create and read a ConfigMap', async () => {
    await eventually(async () => {
      const clusters = (await (await smoke.api('/api/v1/user/clusters', asAdmin())).json()) as { name: string }[]
      return clusters.some((c) => c.name === 'sandbox')
    }, 30_000)
    const kubeconfig = join(tempDir(), 'sandbox.kubeconfig')
    const res = await smoke.api('/api/v1/clustersv2/admin/sandbox/kubeconfig', asAdmin())
    expect(res.status).toBe(200)
    writeFileSync(kubeconfig, await res.text())
    const kubectl = (...args: string[]) => {
      const run = Bun.spawnSync([join(REPO, '.tools', 'bin', 'kubectl'), '--kubeconfig', kubeconfig, ...args], {
        stdout: 'pipe',
        stderr: 'pipe',
      })
      return { code: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() }
    }
    const namespaces = kubectl('get', 'namespaces', '-o', 'name')
    expect(namespaces.err).toBe('')
    expect(namespaces.out).toContain('namespace/default')
    expect(kubectl('create', 'configmap', 'smoke', '-n', 'default', '--from-literal=a=1').code).toBe(0)
    expect(kubectl('get', 'configmap', 'smoke', '-n', 'default', '-o', 'jsonpath={.data.a}').out).toBe('1')
    // The create's audit event was committed before kubectl had its answer.
    const events = (await (await smoke.api('/api/v1/admin/audit?kind=kubernetes', asAdmin())).json()) as {
      verb: string
      objectRef: { resource: string; namespace?: string }
    }[]
    expect(events.map((e) => `${e.verb} ${e.objectRef.resource} in ${e.objectRef.namespace}`)).toContain('create configmaps in default')
  })

  test('an order is rendered by the Helm the binary carries, unpacked into the data dir with the digest it was built with', async () => {
    const source = await smoke.api(
      '/api/v1/admin/chart-sources',
      asAdmin({ method: 'POST', body: JSON.stringify({ name: 'local', url: repo.url }) }),
    )
    expect(source.status).toBe(201)
    const ordered = await smoke.api(
      '/api/v1/user/deploy/orders',
      asAdmin({
        method: 'POST',
        body: JSON.stringify({
          apiVersion: 'x/v1',
          kind: 'Order',
          spec: {
            packages: [
              { chart: { name: 'demo', releaseName: 'demo', namespace: 'apps', sourceRef: { kind: 'HelmRepository', name: 'local' } } },
            ],
          },
        }),
      }),
    )
    expect(ordered.status).toBe(200)
    const uid = (await ordered.json()).metadata.uid
    const manifest = await smoke.api(`/api/v1/user/deploy/orders/${uid}/render/manifest`, asAdmin())
    expect(manifest.status).toBe(200)
    expect((await manifest.text()).split('\n')[1]).toBe('# Source: local - demo@0.2.0')
    const unpacked = readdirSync(join(smoke.dataDir, 'tools')).filter((name) => name.startsWith('helm-'))
    expect(unpacked).toHaveLength(1)
    const digest = new Bun.CryptoHasher('sha256').update(readFileSync(join(smoke.dataDir, 'tools', unpacked[0]!))).digest('hex')
    expect(digest).toBe(new Bun.CryptoHasher('sha256').update(readFileSync(join(REPO, '.tools', 'bin', 'helm'))).digest('hex'))
  })

  test("a month's usage report is printed to PDF by Debian's Chromium", async () => {
    expect((await smoke.api('/api/v1/orgs', asAdmin({ method: 'POST', body: JSON.stringify({ username: 'acme' }) }))).status).toBe(201)
    const spec = { uid: 'db-1', cluster: { uid: 'c-1', name: 'prod-eu' } }
    const events = hourly(spec, Date.UTC(2025, 9, 1), Date.UTC(2025, 9, 2), requests('2', '4Gi'))
    const ingested = await smoke.api('/api/v1/usage/events?org=acme', asAdmin({ method: 'POST', body: JSON.stringify(events) }))
    expect(await ingested.json()).toEqual({ accepted: 24, duplicates: 0, rejected: [], rejectedCount: 0 })
    const pdf = await smoke.api('/api/v1/dashboard/summary/2025/10/download?org=acme', asAdmin())
    expect(pdf.status).toBe(200)
    expect(pdf.headers.get('content-type')).toBe('application/pdf')
    const file = join(tempDir(), 'report.pdf')
    writeFileSync(file, new Uint8Array(await pdf.arrayBuffer()))
    const text = Bun.spawnSync(['pdftotext', '-layout', file, '-']).stdout.toString()
    expect(text).toContain('acme')
    expect(text).toContain('October 2025')
  })

  test('GET /metrics counts what came before by route template; promtool check metrics passes', async () => {
    const res = await smoke.api('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toMatch(/^platform_http_requests_total\{method="GET",route="\/api\/v1\/user",status="200"\} 1$/m)
    expect(text).toContain('platform_http_requests_total{method="GET",route="/api/v1/clusters/:owner/:cluster/k8s/*",status="200"}')
    expect(text).toContain('platform_proxy_upstream_duration_seconds_count{cluster="admin/sandbox"}')
    expect(text).toContain('platform_pdf_renders_total{outcome="ok"} 1')
    expect(text).toContain('platform_usage_events_total{result="accepted"} 24')
    const check = Bun.spawnSync(['promtool', 'check', 'metrics'], { stdin: new TextEncoder().encode(text) })
    expect(check.stdout.toString() + check.stderr.toString()).toBe('')
    expect(check.exitCode).toBe(0)
  })

  test('the web console comes from the binary: /login under the strict CSP with its content-hashed files; Chromium signs the admin in and lists the sandbox', async () => {
    const page = await smoke.api('/login')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toStartWith("default-src 'self'")
    const script = /\/console\/assets\/main-\w+\.js/.exec(await page.text())![0]
    const file = await smoke.api(script)
    expect(file.status).toBe(200)
    expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      pipe: true,
      args: CHROMIUM_FLAGS,
      acceptInsecureCerts: true,
    })
    try {
      const tab = await browser.newPage()
      await tab.goto(`${smoke.server.base}/`, { waitUntil: 'networkidle0' })
      await tab.waitForFunction(() => document.querySelector('h1')?.textContent === 'Sign in', { timeout: 30_000 })
      await passwordStep(tab, 'admin', ADMIN_PASSWORD)
      await tab.waitForFunction(() => document.querySelector('h1')?.textContent === 'Clusters', { timeout: 30_000 })
      expect(new URL(tab.url()).pathname).toBe('/')
      await tab.waitForFunction(() => document.querySelector('tbody tr')?.textContent?.includes('Active'), { timeout: 30_000 })
      const row = await tab.evaluate(() => [...document.querySelectorAll('tbody td')].map((cell) => cell.textContent))
      expect(row.slice(0, 3)).toEqual(['Sandbox', 'admin', 'Active'])
    } finally {
      await browser.close()
    }
  })

  test('systemd-unit prints a unit starting this binary that systemd-analyze verify accepts', () => {
    const unit = cli(['systemd-unit'], {}, smoke.program)
    expect(unit.code).toBe(0)
    expect(unit.stdout).toContain(`ExecStart=${smoke.program.command[0]} serve\n`)
    expect(verifyUnit(unit.stdout)).toEqual({ code: 0, output: '' })
  })

  test('backup while it writes, restore into a new data dir, a second instance on it: tokens, avatars and sealed secrets carry over', async () => {
    const first = await backupDuringWrites(smoke.api, smoke.dataDir, smoke.program)
    await restoredInstanceServes(first, smoke.program)
  })
})

describe('the built binary with no TLS settings (docs/decisions.md §12)', () => {
  test('it serves HTTPS with a CA of its own; its own login and kubeconfig --merge, with no Bun on the machine, take kubectl to the sandbox', async () => {
    const dir = tempDir('platform-binary-')
    const binary = join(dir, 'platform-api')
    copyFileSync(smoke.program.command[0]!, binary)
    const port = freePort()
    const dataDir = join(dir, 'data')
    const bare = { PATH: pathWithout(ABSENT_PROGRAMS) }
    // PLATFORM_TLS '' is the default start (the helper serves plain HTTP otherwise).
    const server = await startServer(
      dataDir,
      { ...bare, PLATFORM_TLS: '', PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD, PLATFORM_SANDBOX_CLUSTER: 'true' },
      { program: [binary], bareEnv: true, cwd: dir, port },
    )
    expect(server.base).toBe(`https://127.0.0.1:${port}`)
    const caPem = readFileSync(join(dataDir, 'tls', 'ca.crt'), 'utf8')
    await eventually(async () => {
      const res = await fetch(`https://localhost:${port}/api/v1/user/clusters`, {
        headers: { authorization: basic('admin', ADMIN_PASSWORD) },
        tls: { ca: caPem },
      } as RequestInit)
      return ((await res.json()) as { name: string }[]).some((c) => c.name === 'sandbox')
    }, 30_000)
    const home = tempDir()
    const terminal = { ...bare, HOME: home }
    const login = Bun.spawn([binary, 'login', `https://localhost:${port}`], {
      env: terminal,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const reader = login.stdout.getReader()
    let out = await readUntil(reader, /Trust it and continue\?/)
    login.stdin.write('yes\n')
    login.stdin.flush()
    out = await readUntil(reader, /one-time code: ([A-Z]{4}-[A-Z]{4})/, out)
    const approved = await fetch(`https://localhost:${port}/api/v1/user/device`, {
      method: 'POST',
      headers: { authorization: basic('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
      body: JSON.stringify({ user_code: /one-time code: ([A-Z]{4}-[A-Z]{4})/.exec(out)![1], approve: true }),
      tls: { ca: caPem },
    } as RequestInit)
    expect(approved.status).toBe(200)
    expect(await login.exited).toBe(0)
    const merged = Bun.spawnSync([binary, 'kubeconfig', 'admin/sandbox', '--merge', '--use'], { env: terminal })
    expect(merged.stderr.toString()).toBe('')
    const kubeconfig = YAML.parse(readFileSync(join(home, '.kube', 'config'), 'utf8'))
    expect(kubeconfig.clusters[0].cluster.server).toBe(`https://localhost:${port}/api/v1/clusters/admin/sandbox/k8s`)
    const pods = Bun.spawnSync([join(REPO, '.tools', 'bin', 'kubectl'), 'get', 'pods', '-A', '-o', 'name'], { env: terminal })
    expect(pods.stderr.toString()).toBe('')
    expect(pods.stdout.toString()).toContain('pod/')
    server.child.kill('SIGTERM')
    await server.child.exited
  })
})
