import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import YAML from 'yaml'
import { scratch } from './fixtures'

const MAIN = join(import.meta.dir, '../../src/kube-emulator/main.ts')
const started: ReturnType<typeof Bun.spawn>[] = []
afterEach(() => {
  for (const p of started.splice(0)) p.kill()
})

const run = (args: string[]) => Bun.spawn([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe' })

/** Reads stdout until the URL line appears. */
async function urlOf(p: ReturnType<typeof run>): Promise<string> {
  const reader = (p.stdout as ReadableStream<Uint8Array>).getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`emulator exited: ${text}`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return text.slice(text.indexOf('http'), text.indexOf('\n')).trim()
}

describe('bun src/kube-emulator/main.ts', () => {
  test('--help → usage on stdout, exit 0', async () => {
    const p = run(['--help'])
    expect(await p.exited).toBe(0)
    expect(await new Response(p.stdout).text()).toContain('--kubeconfig-out')
  })

  test('an unknown flag → usage on stderr, exit 2', async () => {
    const p = run(['--nope'])
    expect(await p.exited).toBe(2)
    expect(await new Response(p.stderr).text()).toContain('unknown option: --nope')
  })

  test('--tls --token --no-seed --kubeconfig-out → HTTPS with that token, an empty cluster, a usable kubeconfig', async () => {
    const dir = scratch()
    const out = join(dir, 'kc.yaml')
    const p = run(['--port', '0', '--tls', '--token', 'cli-token', '--no-seed', '--kubeconfig-out', out, '--quiet'])
    started.push(p)
    const url = await urlOf(p)
    expect(url).toStartWith('https://127.0.0.1:')
    const kc = YAML.parse(await Bun.file(out).text())
    expect(kc.clusters[0].cluster.server).toBe(url)
    expect(kc.users[0].user.token).toBe('cli-token')
    const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString()
    const res = await fetch(`${url}/api/v1/namespaces`, { headers: { Authorization: 'Bearer cli-token' }, tls: { ca } })
    expect(res.status).toBe(200)
    expect((await res.json()).items).toEqual([])
    expect((await fetch(`${url}/api/v1/namespaces`, { tls: { ca } })).status).toBe(401)
  })

  test('the default seeded emulator logs requests without the token', async () => {
    const p = run(['--port', '0', '--token', 'do-not-log-me', '--kubeconfig-out', join(scratch(), 'kc')])
    started.push(p)
    const url = await urlOf(p)
    const res = await fetch(`${url}/api/v1/namespaces/demo/pods`, { headers: { Authorization: 'Bearer do-not-log-me' } })
    expect((await res.json()).items.length).toBeGreaterThan(0)
    p.kill()
    const log = await new Response(p.stderr).text()
    expect(log).toContain('GET /api/v1/namespaces/demo/pods 200')
    expect(log).not.toContain('do-not-log-me')
  })
})
