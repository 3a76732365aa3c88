import { afterAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import { startEmulator } from '../../src/kube-emulator'
import { basic, PASSWORD, tempDir } from '../support/app'
import { stopWithScope } from '../support/children'
import { MAIN } from '../support/process'
import { readUntil } from '../support/wait'
import { kubectlLab } from './kubectl-lab'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** A terminal's environment in a fresh HOME: no KUBECONFIG, no XDG_CONFIG_HOME of the machine. */
function terminal(): { home: string; env: Record<string, string> } {
  const home = tempDir()
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && name !== 'KUBECONFIG' && name !== 'XDG_CONFIG_HOME') env[name] = value
  return { home, env: { ...env, HOME: home } }
}

/** Runs a terminal command of the CLI to its end. */
async function cli(env: Record<string, string>, ...args: string[]) {
  const child = Bun.spawn([process.execPath, MAIN, ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, code }
}

describe('platform-api login, clusters, kubeconfig --merge, logout', () => {
  test('a device sign-in confirmed by the CA fingerprint, then a merged context kubectl uses, in a temporary HOME', async () => {
    const l = await kubectlLab(member)
    const { home, env } = terminal()
    const child = stopWithScope(
      Bun.spawn([process.execPath, MAIN, 'login', l.base], { env, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' }),
    )
    const reader = child.stdout.getReader()
    let out = await readUntil(reader, /Trust it and continue\?/)
    expect(out).toContain(`Its SHA-256 fingerprint is ${new X509Certificate(l.caPem).fingerprint256}`)
    child.stdin.write('yes\n')
    child.stdin.flush()
    out = await readUntil(reader, /one-time code: ([A-Z]{4}-[A-Z]{4})/, out)
    const userCode = /one-time code: ([A-Z]{4}-[A-Z]{4})/.exec(out)![1]!
    expect(out).toContain(`${l.t.config.publicUrl}/login/device?user_code=${userCode}`)
    const approved = await l.t.request('POST', '/api/v1/user/device', {
      headers: { authorization: basic('alice', PASSWORD) },
      body: { user_code: userCode, approve: true },
    })
    expect(approved.status).toBe(200)
    out = await readUntil(reader, /Logged in/, out)
    expect(await child.exited).toBe(0)
    expect(out).toContain(`✓ Logged in to ${l.base} as alice`)
    const configFile = join(home, '.config', 'platform-api', 'config.json')
    expect(statSync(configFile).mode & 0o777).toBe(0o600)
    const saved = JSON.parse(readFileSync(configFile, 'utf8'))
    expect(saved).toMatchObject({ server: l.base, login: 'alice', ca: l.caPem })

    const listed = await cli(env, 'clusters')
    expect(listed.code).toBe(0)
    expect(listed.out).toContain('alice/dev')

    // An existing kubeconfig with a context of its own: the merge adds one and leaves the current one.
    mkdirSync(join(home, '.kube'))
    writeFileSync(
      join(home, '.kube', 'config'),
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'elsewhere', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'someone', user: { token: 'x' } }],
        contexts: [{ name: 'elsewhere', context: { cluster: 'elsewhere', user: 'someone' } }],
        'current-context': 'elsewhere',
      }),
    )
    const merged = await cli(env, 'kubeconfig', 'alice/dev', '--merge')
    expect(merged.err).toBe('')
    expect(merged.out).toContain(`Added context "alice-dev" to ${join(home, '.kube', 'config')}`)
    const config = YAML.parse(readFileSync(join(home, '.kube', 'config'), 'utf8'))
    expect(config['current-context']).toBe('elsewhere')
    expect(config.contexts.map((c: { name: string }) => c.name)).toEqual(['elsewhere', 'alice-dev'])
    expect(statSync(join(home, '.kube', 'config')).mode & 0o777).toBe(0o600)
    const kubectl = Bun.spawn([l.t.config.kubectlPath, '--context', 'alice-dev', 'get', 'pods', '-n', 'demo', '-o', 'name'], {
      env,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [pods, kubectlErr] = await Promise.all([new Response(kubectl.stdout).text(), new Response(kubectl.stderr).text()])
    expect(kubectlErr).toBe('')
    expect(pods).toContain('pod/')

    const used = await cli(env, 'kubeconfig', 'alice/dev', '--merge', '--use', '--readonly')
    expect(used.out).toContain('Updated context "alice-dev"')
    expect(used.out).toContain('Switched to context "alice-dev".')
    expect(YAML.parse(readFileSync(join(home, '.kube', 'config'), 'utf8'))['current-context']).toBe('alice-dev')

    expect((await cli(env, 'logout')).code).toBe(0)
    expect(existsSync(configFile)).toBe(false)
    const after = await cli(env, 'clusters')
    expect(after.code).toBe(1)
    expect(after.err).toContain('not signed in')
    // Six programs started one after another and a poll interval of 5 s: long on a loaded machine.
  }, 90_000)

  test('a CA fingerprint that is not confirmed → nothing is kept', async () => {
    const l = await kubectlLab(member)
    const { home, env } = terminal()
    const child = stopWithScope(
      Bun.spawn([process.execPath, MAIN, 'login', l.base], { env, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' }),
    )
    await readUntil(child.stdout.getReader(), /Trust it and continue\?/)
    child.stdin.write('no\n')
    child.stdin.flush()
    expect(await child.exited).toBe(1)
    expect(await new Response(child.stderr).text()).toContain('the certificate authority was not confirmed')
    expect(existsSync(join(home, '.config', 'platform-api', 'config.json'))).toBe(false)
  })
})
