import { Database as BunSqlite } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import { connectionFromKubeconfig } from '../../src/clusters/connection'
import { startSandbox } from '../../src/clusters/sandbox'
import { registerSandbox } from '../../src/clusters/service'
import { AppError } from '../../src/errors'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'
import { registrationFixture } from './support'

const emulator = await startEmulator({ tls: true, seed: true })
afterAll(() => emulator.stop())
const sandboxConnection = () => ({
  server: emulator.url,
  caData: emulator.caCertPem!,
  tlsServerName: '',
  insecureSkipTlsVerify: false,
  credential: { token: emulator.token },
})

describe('GET /api/v1/user/clusters', () => {
  test('the owner lists a reachable cluster → live version, node count and Active', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await registerSandbox(t.deps, alice.user, sandboxConnection())
    const res = await t.as(alice).get('/api/v1/user/clusters')
    expect(res.status).toBe(200)
    const [cluster] = await res.json()
    expect(cluster).toMatchObject({
      name: 'sandbox',
      ownerName: 'alice',
      ownerID: alice.user.id,
      provider: 'Sandbox',
      endpoint: emulator.url,
      status: { phase: 'Active' },
    })
    expect(cluster.kubernetesVersion).toMatch(/^v1\./)
    const nodes = await fetch(`${emulator.url}/api/v1/nodes`, {
      headers: { authorization: `Bearer ${emulator.token}` },
      tls: { ca: emulator.caCertPem },
    } as RequestInit)
    expect(cluster.nodeCount).toBe(((await nodes.json()) as { items: unknown[] }).items.length)
    expect(cluster.nodeCount).toBeGreaterThan(1) // so that counting from a one-item page is exercised
    expect(cluster.age).toMatch(/^\d+s$/)
  })

  test('a cluster that refuses connections is listed as NotReady with the reason, not an error', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('no') })
    const server = `http://127.0.0.1:${closed.port}`
    await closed.stop(true)
    await registrationFixture(t, alice.user, 'gone', { ...sandboxConnection(), server, caData: '' })
    const [cluster] = await (await t.as(alice).get('/api/v1/user/clusters')).json()
    expect(cluster.status.phase).toBe('NotReady')
    expect(cluster.status.message).toContain('cluster "gone"')
    expect(cluster.nodeCount).toBe(0)
  })

  test('all=true adds the clusters of orgs the caller owns or administers, not of orgs where they are a plain member', async () => {
    const t = await makeTestApp()
    const [olga, adam, mia] = await t.users('olga', 'adam', 'mia')
    const { org } = await makeOrg(t, 'acme', { owner: olga, admins: [adam], members: [mia] })
    await registerSandbox(t.deps, org, sandboxConnection())
    await registrationFixture(t, olga.user, 'own', sandboxConnection())
    const names = async (who: typeof olga, query: string) =>
      (await (await t.as(who).get(`/api/v1/user/clusters${query}`)).json()).map(
        (c: { ownerName: string; name: string }) => `${c.ownerName}/${c.name}`,
      )
    expect(await names(olga, '')).toEqual(['olga/own'])
    expect(await names(olga, '?all=true')).toEqual(['acme/sandbox', 'olga/own'])
    expect(await names(adam, '?all=true')).toEqual(['acme/sandbox'])
    expect(await names(mia, '?all=true')).toEqual([])
  })

  test("another user's clusters are not listed", async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await registerSandbox(t.deps, alice.user, sandboxConnection())
    expect(await (await t.as(bob).get('/api/v1/user/clusters')).json()).toEqual([])
  })

  test('a token without read:cluster → 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const { mintToken } = await import('../../src/identity/tokens/service')
    const { plaintext } = await mintToken(t.deps.db, alice.user.id, { name: 'user-only', scopes: ['read:user'] })
    expect((await t.request('GET', '/api/v1/user/clusters', { token: plaintext })).status).toBe(403)
  })

  test('the cluster credential is never in the response and only sealed in the database', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await registerSandbox(t.deps, alice.user, sandboxConnection())
    const text = await (await t.as(alice).get('/api/v1/user/clusters')).text()
    expect(text).not.toContain(emulator.token)
    await t.deps.db.close()
    const raw = new BunSqlite(join(t.config.dataDir, 'platform.db'), { readonly: true })
    const dump = JSON.stringify(raw.query('SELECT * FROM clusters').all())
    raw.close()
    expect(dump).not.toContain(emulator.token)
  })
})

describe('the sandbox cluster', () => {
  test('startSandbox registers the first admin\'s cluster "sandbox" and writes a kubeconfig kubectl can use', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const sandbox = await startSandbox(t.deps)
    try {
      const [cluster] = await (await t.as(admin).get('/api/v1/user/clusters')).json()
      expect(cluster).toMatchObject({ name: 'sandbox', ownerName: 'root', status: { phase: 'Active' } })
      const kubeconfig = join(t.config.dataDir, 'sandbox.kubeconfig')
      expect(statSync(kubeconfig).mode & 0o777).toBe(0o600)
      // Asynchronously: the emulator answering kubectl lives in this process.
      const run = Bun.spawn([t.config.kubectlPath, 'get', 'namespaces', '-o', 'name'], {
        env: { ...process.env, KUBECONFIG: kubeconfig },
        stdout: 'pipe',
      })
      expect(await new Response(run.stdout).text()).toContain('namespace/default')
    } finally {
      await sandbox.stop()
    }
  })

  test('a restart points the existing registration at the new emulator instead of adding another', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const first = await startSandbox(t.deps)
    await first.stop()
    const second = await startSandbox(t.deps)
    try {
      const clusters = await (await t.as(admin).get('/api/v1/user/clusters')).json()
      expect(clusters).toHaveLength(1)
      expect(clusters[0]).toMatchObject({ endpoint: second.url, status: { phase: 'Active' } })
    } finally {
      await second.stop()
    }
  })
})

describe("the sandbox's identity", () => {
  test("its uid is its kube-system namespace's uid, kept across restarts", async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const first = await startSandbox(t.deps)
    const kubeSystem = async (e: typeof first) =>
      (
        (await (
          await fetch(`${e.url}/api/v1/namespaces/kube-system`, {
            headers: { authorization: `Bearer ${e.token}` },
            tls: { ca: e.caCertPem },
          } as RequestInit)
        ).json()) as { metadata: { uid: string } }
      ).metadata.uid
    const uid = await kubeSystem(first)
    await first.stop()
    const second = await startSandbox(t.deps)
    try {
      expect(await kubeSystem(second)).toBe(uid)
      const [cluster] = await (await t.as(admin).get('/api/v1/user/clusters')).json()
      expect(cluster.uid).toBe(uid)
    } finally {
      await second.stop()
    }
  })
})

describe('kubeconfig import rules', () => {
  const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://k8s.example:6443' }) =>
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [{ name: 'k', cluster }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    })
  const refusal = (text: string) => {
    try {
      connectionFromKubeconfig(text)
    } catch (e) {
      return e instanceof AppError ? { kind: e.kind, field: e.fields[0]?.field } : e
    }
    return undefined
  }

  test('a bearer-token kubeconfig gives server, CA and token', () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64')
    const connection = connectionFromKubeconfig(
      kubeconfig({ token: 'abc' }, { server: 'https://k8s.example:6443/', 'certificate-authority-data': ca }),
    )
    expect(connection).toMatchObject({ server: 'https://k8s.example:6443', credential: { token: 'abc' }, insecureSkipTlsVerify: false })
    expect(connection.caData).toContain('BEGIN CERTIFICATE')
  })

  test.each([
    ['an exec plugin', { exec: { command: 'aws', args: ['eks', 'get-token'] } }, 'users.exec'],
    ['an auth provider', { 'auth-provider': { name: 'gcp' } }, 'users.auth-provider'],
    ['a token file', { tokenFile: '/var/run/secrets/token' }, 'users.tokenFile'],
    ['a client certificate path', { 'client-certificate': '/etc/cert.pem', 'client-key': '/etc/key.pem' }, 'users.client-certificate'],
    ['basic auth', { username: 'u', password: 'p' }, 'users.username'],
    ['impersonation', { token: 't', as: 'someone-weaker' }, 'users.as'],
  ])('%s is refused with 422 naming the field', (_, user, field) => {
    expect(refusal(kubeconfig(user))).toEqual({ kind: 'invalid', field })
  })

  test('a CA file path is refused', () => {
    expect(refusal(kubeconfig({ token: 'x' }, { server: 'https://k', 'certificate-authority': '/etc/ca.pem' }))).toEqual({
      kind: 'invalid',
      field: 'clusters.certificate-authority',
    })
  })

  test('a server URL with embedded credentials is refused', () => {
    expect(refusal(kubeconfig({ token: 'x' }, { server: 'https://user:pw@k8s.example' }))).toEqual({ kind: 'invalid', field: 'server' })
  })

  test('a missing context is refused', () => {
    expect(refusal('apiVersion: v1\nkind: Config\ncontexts: []\n')).toEqual({ kind: 'invalid', field: 'current-context' })
  })
})
