import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { tempDir } from '../support/app'
import { type KubectlLab, kubectlLab, runKubectl } from './kubectl-lab'
import { importAs, importBody } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** acme (alice owner) imports the member as `prod` and grants it to team `readers`, whose member is bob; bob's kubeconfig of it. */
async function readTeamKubeconfig(l: KubectlLab): Promise<string> {
  await makeOrg(l.t, 'acme', { owner: l.alice, members: [l.bob] })
  expect((await importAs(l.t, l.alice, 'acme', importBody(member, 'prod'))).status).toBe(201)
  const team = (await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'readers', permission: 'read' })).json()) as {
    id: number
  }
  expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/members/bob`)).status).toBe(204)
  expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/clusters/prod`)).status).toBe(204)
  const res = await l.t.as(l.bob).get('/api/v1/clustersv2/acme/prod/kubeconfig?readonly=true')
  expect(res.status).toBe(200)
  const path = join(tempDir(), 'bob.kubeconfig')
  writeFileSync(path, await res.text())
  return path
}

describe('kubectl auth can-i and whoami answer as the platform decides', () => {
  test("a read-only kubeconfig: can-i create pods says no with the platform's reason; can-i list pods asks the member", async () => {
    const l = await kubectlLab(member)
    const create = await runKubectl(l, l.readonlyKubeconfig, 'auth', 'can-i', 'create', 'pods', '-n', 'demo')
    expect(create.out.trim()).toBe('no - token does not have at least one of required scope(s): [write:cluster]')
    expect(create.code).toBe(1)
    expect(create.err).toBe('')
    const list = await runKubectl(l, l.readonlyKubeconfig, 'auth', 'can-i', 'list', 'pods', '-n', 'demo')
    expect(list.out.trim()).toBe('yes')
    const exec = await runKubectl(l, l.readonlyKubeconfig, 'auth', 'can-i', 'get', 'pods', '--subresource=exec', '-n', 'demo')
    expect(exec.out.trim()).toStartWith('no')
  })

  test('the review names the reason: the token scope for a read-only token', async () => {
    const l = await kubectlLab(member)
    const token = /token: (\S+)/.exec(await Bun.file(l.readonlyKubeconfig).text())![1]!
    const res = await fetch(`${l.base}/api/v1/clusters/alice/dev/k8s/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ spec: { resourceAttributes: { verb: 'delete', resource: 'configmaps', namespace: 'demo' } } }),
      tls: { ca: l.caPem },
    } as RequestInit)
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({
      kind: 'SelfSubjectAccessReview',
      status: { allowed: false, reason: 'token does not have at least one of required scope(s): [write:cluster]' },
    })
  })

  test('a read team grant: can-i create pods says no even with a write token', async () => {
    const l = await kubectlLab(member)
    const readonly = await Bun.file(await readTeamKubeconfig(l)).text()
    // bob's own unscoped token, put in a kubeconfig by hand: the grant still only reads.
    const path = join(tempDir(), 'bob-write.kubeconfig')
    writeFileSync(path, readonly.replace(/token: .*/, `token: ${l.bob.token}`))
    const create = await runKubectl(l, path, 'auth', 'can-i', 'create', 'pods', '-n', 'demo')
    expect(create.out.trim()).toBe('no - your access to this cluster is read-only')
    expect((await runKubectl(l, path, 'auth', 'can-i', 'watch', 'pods', '-n', 'demo')).out.trim()).toBe('yes')
  })

  test('whoami names the platform user and, on an org cluster, the org and the granted teams; it is no write', async () => {
    const l = await kubectlLab(member)
    const own = await runKubectl(l, l.readonlyKubeconfig, 'auth', 'whoami', '-o', 'json')
    expect(own.code).toBe(0)
    expect(JSON.parse(own.out).status.userInfo).toEqual({ username: 'alice' })
    const bobs = await runKubectl(l, await readTeamKubeconfig(l), 'auth', 'whoami', '-o', 'json')
    expect(bobs.err).toBe('')
    expect(JSON.parse(bobs.out).status.userInfo).toEqual({ username: 'bob', groups: ['platform:org:acme', 'platform:team:acme:readers'] })
  })
})
