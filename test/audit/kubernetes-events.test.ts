import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { auditWriter } from '../../src/audit/writer'
import { startEmulator } from '../../src/kube-emulator'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { type ClusterLab, importedCluster } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { type TestUser, tempDir } from '../support/app'
import { freePort } from '../support/ports'
import { eventually } from '../support/wait'
import { auditAt, expectNoSecret, kubernetesEvents } from './support'

/**
 * The audit trail of the member clusters (docs/decisions.md §8), driven by the real kubectl
 * through the platform's native passthrough and by the spec's proxy routes.
 */

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** A value only the ConfigMap's body carries, and one only an exec's stdout: neither may be recorded. */
const BODY_SECRET = 'body-only-value-5f1c'
const STDOUT_SECRET = 'stdout-only-value-9ad2'

interface Lab extends ClusterLab {
  base: string
  caPem: string
  auditLog: string
}

/** The platform over TLS on a real port (kubectl sends tokens over HTTPS only), its audit log in a file; alice's cluster `dev` imported. */
async function lab(): Promise<Lab> {
  const dataDir = tempDir()
  const port = freePort()
  const tls = await generateServerTls(['127.0.0.1'])
  for (const [file, pem] of [
    ['tls.crt', tls.certPem],
    ['tls.key', tls.keyPem],
    ['ca.crt', tls.caCertPem],
  ] as const)
    writeFileSync(join(dataDir, file), pem)
  const auditLog = join(dataDir, 'audit.jsonl')
  const imported = await importedCluster(member, {
    PLATFORM_PUBLIC_URL: `https://127.0.0.1:${port}`,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_TLS_CERT_FILE: join(dataDir, 'tls.crt'),
    PLATFORM_TLS_KEY_FILE: join(dataDir, 'tls.key'),
    PLATFORM_TLS_CA_FILE: join(dataDir, 'ca.crt'),
    PLATFORM_AUDIT_LOG: auditLog,
  })
  const server = imported.t.app.listen({ port, hostname: '127.0.0.1', reusePort: false, tls: { cert: tls.certPem, key: tls.keyPem } })
  afterAll(() => server.stop(true))
  return { ...imported, base: `https://127.0.0.1:${port}`, caPem: tls.caCertPem, auditLog }
}

/**
 * Downloads a kubeconfig of `owner/cluster` for `who` (read-only when asked): the file, its token
 * and the token's name (`kubeconfig-<owner>-<cluster>[-readonly]`).
 */
async function kubeconfigOf(
  l: Lab,
  who: TestUser,
  cluster: string,
  readonly = false,
): Promise<{ file: string; token: string; name: string }> {
  const res = await l.t.as(who).get(`/api/v1/clustersv2/${cluster}/kubeconfig${readonly ? '?readonly=true' : ''}`)
  expect(res.status).toBe(200)
  const text = await res.text()
  const file = join(tempDir(), 'kubeconfig')
  writeFileSync(file, text)
  const token = /token: (\S+)/.exec(text)![1]!
  return { file, token, name: `kubeconfig-${cluster.replace('/', '-')}${readonly ? '-readonly' : ''}` }
}

async function kubectl(l: Lab, kubeconfig: string, ...args: string[]): Promise<{ out: string; err: string; code: number }> {
  const child = Bun.spawn([l.t.config.kubectlPath, '--kubeconfig', kubeconfig, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, code }
}

describe('proxied writes and sessions through kubectl', () => {
  test('kubectl apply, delete and exec each leave one event with the user, the token by name and the cluster; reads leave none; no secret is recorded', async () => {
    const l = await lab()
    const alice = await kubeconfigOf(l, l.alice, 'alice/dev')
    const manifest = join(tempDir(), 'cm.yaml')
    writeFileSync(
      manifest,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audited\n  namespace: demo\ndata:\n  value: ${BODY_SECRET}\n`,
    )
    // Reads first: get, list across namespaces, logs, discovery; none may be recorded.
    const pod = (await kubectl(l, alice.file, 'get', 'pods', '-n', 'demo', '-l', 'app=api', '-o', 'name')).out.trim().split('\n')[0]!
    expect(pod).toStartWith('pod/')
    expect((await kubectl(l, alice.file, 'get', 'pods', '-A')).code).toBe(0)
    expect((await kubectl(l, alice.file, 'logs', '-n', 'demo', pod)).code).toBe(0)
    expect((await kubectl(l, alice.file, 'auth', 'can-i', 'create', 'pods')).out.trim()).toBe('yes')
    expect(await kubernetesEvents(l.t, 'alice/dev')).toEqual([])

    expect((await kubectl(l, alice.file, 'apply', '-f', manifest)).out).toContain('configmap/audited created')
    expect((await kubectl(l, alice.file, 'delete', 'configmap', 'audited', '-n', 'demo')).code).toBe(0)
    // The command holds the printed value split by quotes: only stdout holds it whole.
    const script = `echo ${STDOUT_SECRET.slice(0, 6)}'${STDOUT_SECRET.slice(6)}'; exit 3`
    const exec = await kubectl(l, alice.file, 'exec', '-n', 'demo', pod, '--', 'sh', '-c', script)
    expect(exec.code).toBe(3)
    expect(exec.out).toContain(STDOUT_SECRET)

    const recorded = await eventually(async () => {
      const all = await kubernetesEvents(l.t, 'alice/dev')
      return all.length === 3 && all[2]!.endTime ? all : undefined
    }, 10_000)
    const [create, remove, session] = recorded
    const who = { actor: { login: 'alice' }, credential: { kind: 'token', name: alice.name }, cluster: 'alice/dev', kind: 'kubernetes' }
    expect(create).toMatchObject({
      ...who,
      verb: 'create',
      objectRef: { apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: 'demo', name: 'audited' },
      outcome: { status: 201, result: 'allowed' },
    })
    expect(remove).toMatchObject({
      ...who,
      verb: 'delete',
      objectRef: { apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: 'demo', name: 'audited' },
      outcome: { status: 200, result: 'allowed' },
    })
    expect(session).toMatchObject({
      ...who,
      verb: 'exec',
      objectRef: { resource: 'pods', namespace: 'demo', name: pod.slice('pod/'.length), subresource: 'exec' },
      command: ['sh', '-c', script],
      exitCode: 3,
      outcome: { status: 101, result: 'allowed' },
    })
    expect(Date.parse(session!.endTime!)).toBeGreaterThanOrEqual(Date.parse(session!.time))
    for (const event of recorded) expect(event).not.toHaveProperty('route')

    // An exec that succeeds: exit code 0.
    expect((await kubectl(l, alice.file, 'exec', '-n', 'demo', pod, '--', 'true')).code).toBe(0)
    const done = await eventually(async () => {
      const last = (await kubernetesEvents(l.t, 'alice/dev')).at(-1)
      return last?.verb === 'exec' && last.command?.[0] === 'true' && last.endTime ? last : undefined
    }, 10_000)
    expect(done.exitCode).toBe(0)
    await expectNoSecret(l.t, l.auditLog, [alice.token, l.alice.token, member.token, BODY_SECRET, STDOUT_SECRET])
  }, 60_000)

  test('a read-only kubeconfig (read:cluster) refused a write: recorded as refused with its token', async () => {
    const l = await lab()
    const reader = await kubeconfigOf(l, l.alice, 'alice/dev', true)
    const refused = await kubectl(l, reader.file, 'create', 'configmap', 'by-read-token', '-n', 'demo')
    expect(refused.code).not.toBe(0)
    const last = await eventually(async () => (await kubernetesEvents(l.t, 'alice/dev')).find((e) => e.credential.name === reader.name))
    expect(last).toMatchObject({
      actor: { login: 'alice' },
      credential: { kind: 'token', name: reader.name },
      verb: 'create',
      objectRef: { resource: 'configmaps', namespace: 'demo' },
      outcome: { status: 403, result: 'refused' },
    })
  }, 30_000)

  test("a team member with a read grant refused a write appears as refused in the org's audit; the write grant's is allowed", async () => {
    const l = await lab()
    const [rita, will] = await l.t.users('rita', 'will')
    await makeOrg(l.t, 'acme', { owner: l.alice })
    const imported = await l.t.as(l.alice).send('POST', '/api/v1/clustersv2/acme/import', {
      name: 'prod',
      server: member.url,
      caData: Buffer.from(member.caCertPem!).toString('base64'),
      token: member.token,
    })
    expect(imported.status).toBe(201)
    const team = async (name: string, permission: string, who: TestUser) => {
      const created = (await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name, permission })).json()) as { id: number }
      expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${created.id}/members/${who.name}`)).status).toBe(204)
      expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${created.id}/clusters/prod`)).status).toBe(204)
    }
    await team('readers', 'read', rita!)
    await team('writers', 'write', will!)
    const ritaConfig = await kubeconfigOf(l, rita!, 'acme/prod', true)
    expect((await kubectl(l, ritaConfig.file, 'get', 'configmaps', '-n', 'demo')).code).toBe(0)
    expect((await kubectl(l, ritaConfig.file, 'delete', 'configmap', 'kube-root-ca.crt', '-n', 'demo')).code).not.toBe(0)
    // The same write by rita's `all` token, which the read grant refuses rather than the token's scope.
    const post = (who: TestUser, name: string) =>
      fetch(`${l.base}/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps`, {
        method: 'POST',
        headers: { authorization: `token ${who.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name }, data: { value: BODY_SECRET } }),
        tls: { ca: l.caPem },
      } as RequestInit)
    expect((await post(rita!, 'by-reader')).status).toBe(403)
    expect((await post(will!, 'by-writer')).status).toBe(201)
    const orgEvents = await eventually(async () => {
      await auditWriter(l.t.deps).drain()
      const seen = (await auditAt(l.t, l.alice, '/api/v1/orgs/acme/audit?kind=kubernetes')).reverse()
      return seen.length === 3 ? seen : undefined
    })
    expect(orgEvents).toMatchObject([
      { actor: { login: 'rita' }, credential: { name: ritaConfig.name }, verb: 'delete', outcome: { status: 403, result: 'refused' } },
      { actor: { login: 'rita' }, verb: 'create', outcome: { status: 403, result: 'refused' } },
      { actor: { login: 'will' }, verb: 'create', outcome: { status: 201, result: 'allowed' } },
    ])
    for (const event of orgEvents) expect(event).toMatchObject({ org: 'acme', cluster: 'acme/prod', kind: 'kubernetes' })
    await l.t.as(will!).send('DELETE', '/api/v1/clusters/acme/prod/k8s/api/v1/namespaces/demo/configmaps/by-writer')
    await expectNoSecret(l.t, l.auditLog, [rita!.token, will!.token, ritaConfig.token, member.token, BODY_SECRET])
  }, 60_000)

  test('a create by generateName → its event names the object the member made', async () => {
    const l = await lab()
    const created = await l.t
      .as(l.alice)
      .send('POST', '/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps', { metadata: { generateName: 'gen-' } })
    expect(created.status).toBe(201)
    const { metadata } = (await created.json()) as { metadata: { name: string } }
    expect(metadata.name).toStartWith('gen-')
    const [event] = (await kubernetesEvents(l.t, 'alice/dev')).slice(-1)
    expect(event).toMatchObject({ verb: 'create', objectRef: { resource: 'configmaps', namespace: 'demo', name: metadata.name } })
    expect(
      (await l.t.as(l.alice).send('DELETE', `/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps/${metadata.name}`)).status,
    ).toBe(200)
  }, 30_000)

  test("the spec's proxy routes record their writes too; their reads leave nothing", async () => {
    const l = await lab()
    const at = (path: string) => `/api/v1/clusters/alice/dev/proxy/core/v1/namespaces/demo/configmaps${path}`
    const before = (await kubernetesEvents(l.t, 'alice/dev')).length
    expect((await l.t.as(l.alice).get(at(''))).status).toBe(200)
    expect((await l.t.as(l.alice).send('POST', at(''), { metadata: { name: 'by-spec' }, data: { value: BODY_SECRET } })).status).toBe(200)
    expect((await l.t.as(l.alice).get(at('/by-spec'))).status).toBe(200)
    expect((await l.t.as(l.alice).send('DELETE', at('/by-spec'))).status).toBe(200)
    const added = (await kubernetesEvents(l.t, 'alice/dev')).slice(before)
    expect(added).toMatchObject([
      {
        verb: 'create',
        objectRef: { apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: 'demo', name: 'by-spec' },
        credential: { kind: 'token' },
      },
      { verb: 'delete', objectRef: { resource: 'configmaps', namespace: 'demo', name: 'by-spec' } },
    ])
  }, 30_000)
})
