import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { tempDir } from '../support/app'
import { type KubectlLab, kubectlLab, runKubectl } from './kubectl-lab'
import { importAs, importBody } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

const tokenOf = (kubeconfig: string) => /token: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]!

/** fetch with `token` that trusts the platform's test CA. */
const callWith = (l: KubectlLab, token: string, path: string) =>
  fetch(`${l.base}${path}`, { headers: { authorization: `Bearer ${token}` }, tls: { ca: l.caPem } } as RequestInit)

/** alice's kubeconfig tokens by name. */
async function kubeconfigTokens(l: KubectlLab): Promise<{ name: string; scopes: string[] }[]> {
  const tokens = (await (await l.t.as(l.alice).get('/api/v1/user/settings/tokens/access-tokens/')).json()) as {
    name: string
    scopes: string[]
  }[]
  return tokens.filter((k) => k.name.startsWith('kubeconfig-')).sort((a, b) => a.name.localeCompare(b.name))
}

describe("a kubeconfig's token is limited to its cluster", () => {
  test("a kubeconfig of cluster A pointed at cluster B → 403, and kubectl prints the platform's reason", async () => {
    const l = await kubectlLab(member)
    await makeOrg(l.t, 'acme', { owner: l.alice })
    expect((await importAs(l.t, l.alice, 'acme', importBody(member, 'other'))).status).toBe(201)
    const token = tokenOf(l.kubeconfig)
    expect((await callWith(l, token, '/api/v1/clusters/alice/dev/k8s/api/v1/namespaces')).status).toBe(200)
    const refused = await callWith(l, token, '/api/v1/clusters/acme/other/k8s/api/v1/namespaces')
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message: "this token is a kubeconfig's: it may be used on that kubeconfig's cluster only",
    })
    const pointed = join(tempDir(), 'pointed.kubeconfig')
    writeFileSync(pointed, readFileSync(l.kubeconfig, 'utf8').replace('/clusters/alice/dev/k8s', '/clusters/acme/other/k8s'))
    const cache = tempDir()
    const ok = await runKubectl(l, l.kubeconfig, '--cache-dir', cache, 'get', 'configmaps', '-n', 'demo')
    expect(ok.code).toBe(0)
    const { err, code } = await runKubectl(l, pointed, '--cache-dir', cache, 'create', 'configmap', 'elsewhere', '-n', 'demo')
    expect(code).not.toBe(0)
    expect(err).toContain("this token is a kubeconfig's: it may be used on that kubeconfig's cluster only")
  })

  test('it is refused on every route that is not its cluster’s', async () => {
    const l = await kubectlLab(member)
    const token = tokenOf(l.kubeconfig)
    expect((await callWith(l, token, '/api/v1/clustersv2/alice/dev')).status).toBe(200)
    for (const path of [
      '/api/v1/user',
      '/api/v1/user/clusters',
      '/api/v1/clustersv2/alice',
      '/api/v1/user/settings/tokens/access-tokens/',
    ]) {
      const res = await callWith(l, token, path)
      expect({ path, status: res.status }).toEqual({ path, status: 403 })
    }
  })

  test('a second download of the same cluster and access level revokes the first; the other level stays', async () => {
    const l = await kubectlLab(member)
    expect(await kubeconfigTokens(l)).toEqual(
      [
        { name: 'kubeconfig-alice-dev', scopes: ['write:cluster'] },
        { name: 'kubeconfig-alice-dev-readonly', scopes: ['read:cluster'] },
      ].map((k) => expect.objectContaining(k)),
    )
    const first = tokenOf(l.kubeconfig)
    const again = join(tempDir(), 'again.kubeconfig')
    writeFileSync(again, await (await l.t.as(l.alice).get('/api/v1/clustersv2/alice/dev/kubeconfig')).text())
    expect(tokenOf(again)).not.toBe(first)
    const revoked = await runKubectl(l, l.kubeconfig, 'get', 'pods', '-n', 'demo')
    expect(revoked.code).not.toBe(0)
    expect(revoked.err).toContain('You must be logged in to the server')
    expect((await runKubectl(l, again, 'get', 'pods', '-n', 'demo')).code).toBe(0)
    expect((await runKubectl(l, l.readonlyKubeconfig, 'get', 'pods', '-n', 'demo')).code).toBe(0)
    expect((await kubeconfigTokens(l)).map((k) => k.name).sort()).toEqual(['kubeconfig-alice-dev', 'kubeconfig-alice-dev-readonly'])
  })
})
