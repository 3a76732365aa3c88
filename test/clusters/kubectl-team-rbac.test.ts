/**
 * A team's RBAC on an impersonating org cluster, end to end with kubectl: the member binds the
 * team's group (`platform:team:<org>:<team>`), and every kind of call a team member makes (lists,
 * watches, followed logs, access reviews) reaches the member carrying that group.
 */
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { tempDir } from '../support/app'
import { readUntil } from '../support/kubectl-streams'
import { type KubectlLab, kubectlLab, runKubectl, spawnKubectl } from './kubectl-lab'
import { importAs, importBody } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** A request to the member itself, as its admin (what the cluster's own operator does). */
const asMemberAdmin = (method: string, path: string, body: unknown) =>
  fetch(`${member.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    tls: { ca: member.caCertPem },
  } as RequestInit)

// In the member: team ops of acme may read pods, and their logs, in demo; nothing else is bound.
for (const [path, body] of [
  [
    '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles',
    {
      metadata: { name: 'pod-reader' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      ],
    },
  ],
  [
    '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings',
    {
      metadata: { name: 'ops-reads-pods' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'platform:team:acme:ops' }],
    },
  ],
] as const)
  expect((await asMemberAdmin('POST', path, body)).status).toBe(201)

/**
 * acme (alice owner) registers the member as `prod` with impersonation and grants it to team ops, whose
 * member is bob; bob's and alice's read-only kubeconfigs of it (a read team may download no other) (alice is in no team granted the cluster).
 */
async function teamKubeconfigs(l: KubectlLab): Promise<{ bob: string; alice: string }> {
  await makeOrg(l.t, 'acme', { owner: l.alice, members: [l.bob] })
  expect((await importAs(l.t, l.alice, 'acme', { ...importBody(member, 'prod'), impersonate: true })).status).toBe(201)
  const team = (await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'ops', permission: 'read' })).json()) as {
    id: number
  }
  expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/members/bob`)).status).toBe(204)
  expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/clusters/prod`)).status).toBe(204)
  const kubeconfig = async (who: typeof l.bob) => {
    const res = await l.t.as(who).get('/api/v1/clustersv2/acme/prod/kubeconfig?readonly=true')
    expect(res.status).toBe(200)
    const path = join(tempDir(), `${who.user.name}.kubeconfig`)
    writeFileSync(path, await res.text())
    return path
  }
  return { bob: await kubeconfig(l.bob), alice: await kubeconfig(l.alice) }
}

const pod = async () => {
  const res = await asMemberAdmin('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dapi', undefined)
  return ((await res.json()) as { items: { metadata: { name: string } }[] }).items[0]!.metadata.name
}

test('bob of team ops lists pods in demo, is refused in kube-system by the member naming him, and can-i agrees', async () => {
  const l = await kubectlLab(member)
  const { bob } = await teamKubeconfigs(l)
  const listed = await runKubectl(l, bob, 'get', 'pods', '-n', 'demo', '-o', 'name')
  expect(listed).toMatchObject({ err: '', code: 0 })
  expect(listed.out).toContain(`pod/${await pod()}`)
  const elsewhere = await runKubectl(l, bob, 'get', 'pods', '-n', 'kube-system')
  expect(elsewhere.code).toBe(1)
  expect(elsewhere.err.trim()).toBe(
    'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "kube-system"',
  )
  expect((await runKubectl(l, bob, 'auth', 'can-i', 'watch', 'pods', '-n', 'demo')).out.trim()).toBe('yes')
  expect((await runKubectl(l, bob, 'auth', 'can-i', 'list', 'pods', '-n', 'kube-system')).out.trim()).toBe('no')
})

test('bob watches pods in demo: the watch stream is authorized by his team group and shows a pod created afterwards', async () => {
  const l = await kubectlLab(member)
  const { bob } = await teamKubeconfigs(l)
  const watch = spawnKubectl(l, bob)(['get', 'pods', '-n', 'demo', '--watch', '-o', 'name'])
  const stderr = new Response(watch.stderr).text()
  try {
    const first = await readUntil(watch.stdout, (text) => text.includes('\n'))
    expect(first).toStartWith('pod/')
    // Created once the watch runs: only the watch stream, not the list before it, can show it.
    const created = await asMemberAdmin('POST', '/api/v1/namespaces/demo/pods', {
      metadata: { name: 'seen-by-ops' },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    })
    expect(created.status).toBe(201)
    await readUntil(watch.stdout, (text) => text.includes('pod/seen-by-ops'))
  } finally {
    watch.kill('SIGINT')
    await watch.exited
  }
  expect(await stderr).toBe('')
})

test('bob follows a pod log in demo: lines stream as they come', async () => {
  const l = await kubectlLab(member)
  const { bob } = await teamKubeconfigs(l)
  const follow = spawnKubectl(l, bob)(['logs', '-f', '-n', 'demo', await pod()])
  const stderr = new Response(follow.stderr).text()
  try {
    const lines = await readUntil(follow.stdout, (text) => text.split('\n').length > 2)
    expect(lines).toMatch(/level=\w+ pod=api-\S+ container=api seq=\d+/)
  } finally {
    follow.kill('SIGINT')
    await follow.exited
  }
  expect(await stderr).toBe('')
})

test('alice, in no team granted the cluster, is refused by the member: list, watch and followed log', async () => {
  const l = await kubectlLab(member)
  const { alice } = await teamKubeconfigs(l)
  const refusal =
    'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "demo"'
  expect((await runKubectl(l, alice, 'get', 'pods', '-n', 'demo')).err.trim()).toBe(refusal)
  const watched = await runKubectl(l, alice, 'get', 'pods', '-n', 'demo', '--watch', '--request-timeout=20s')
  expect({ code: watched.code, err: watched.err.trim() }).toEqual({ code: 1, err: refusal })
  const name = await pod()
  const followed = await runKubectl(l, alice, 'logs', '-f', '-n', 'demo', name, '--request-timeout=20s')
  expect(followed.code).toBe(1)
  expect(followed.err).toContain(`User "alice" cannot get resource "pods" in API group "" in the namespace "demo"`)
})
