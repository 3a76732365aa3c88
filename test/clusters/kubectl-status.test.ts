import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { mintToken } from '../../src/identity/tokens/service'
import { startEmulator } from '../../src/kube-emulator'
import { basic, makeTestApp, tempDir } from '../support/app'
import { type KubectlLab, kubectlLab, runKubectl } from './kubectl-lab'
import { deadRegistrationFixture } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

/** fetch that trusts the platform's test CA. */
const call = (l: KubectlLab, path: string, init: RequestInit = {}) =>
  fetch(`${l.base}${path}`, { ...init, tls: { ca: l.caPem } } as RequestInit)

/** A copy of `kubeconfig` whose token is `token`. */
function withToken(kubeconfig: string, token: string): string {
  const path = join(tempDir(), 'kubeconfig')
  writeFileSync(path, readFileSync(kubeconfig, 'utf8').replace(/token: .*/, `token: ${token}`))
  return path
}

describe("the platform's own refusals on the kubectl endpoint are Kubernetes Status bodies", () => {
  test("a read-only kubeconfig's create → kubectl prints the platform's reason", async () => {
    const l = await kubectlLab(member)
    const { err, code } = await runKubectl(l, l.readonlyKubeconfig, 'create', 'configmap', 'refused', '-n', 'demo')
    expect(code).not.toBe(0)
    expect(err).toBe('error: failed to create configmap: token does not have at least one of required scope(s): [write:cluster]\n')
  })

  // kubectl reads discovery from its cache, as it does for ten minutes after a first call; the
  // discovery client never shows a body, so the refusal is the list's.
  test("a deleted cluster → kubectl prints NotFound with the platform's reason", async () => {
    const l = await kubectlLab(member)
    const cache = tempDir()
    expect((await runKubectl(l, l.kubeconfig, '--cache-dir', cache, 'get', 'pods', '-n', 'demo')).code).toBe(0)
    expect((await l.t.as(l.alice).delete('/api/v1/clustersv2/alice/dev')).status).toBe(204)
    const { err, code } = await runKubectl(l, l.kubeconfig, '--cache-dir', cache, 'get', 'pods', '-n', 'demo')
    expect(code).not.toBe(0)
    expect(err).toContain('Error from server (NotFound)')
    expect(err).toContain('cluster not found')
  })

  test('a token that is not valid → kubectl says the user must log in, with the reason', async () => {
    const l = await kubectlLab(member)
    const cache = tempDir()
    expect((await runKubectl(l, l.kubeconfig, '--cache-dir', cache, 'get', 'pods', '-n', 'demo')).code).toBe(0)
    const { err, code } = await runKubectl(
      l,
      withToken(l.kubeconfig, 'not-a-real-token'),
      '--cache-dir',
      cache,
      'get',
      'pods',
      '-n',
      'demo',
    )
    expect(code).not.toBe(0)
    expect(err).toStartWith('error: You must be logged in to the server (')
    expect(err).not.toContain('the server has asked for the client to provide credentials')
  })

  test('the Status carries kind, apiVersion, reason and code as the apiserver gives them', async () => {
    const l = await kubectlLab(member)
    const res = await call(l, '/api/v1/clusters/alice/nope/k8s/api/v1/namespaces', { headers: { authorization: `token ${l.alice.token}` } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'cluster not found',
      reason: 'NotFound',
      code: 404,
    })
    const write = await call(l, '/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps', {
      method: 'POST',
      headers: { authorization: `token ${l.bob.token}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(write.status).toBe(404)
    expect(await write.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 })
    const anonymous = await call(l, '/api/v1/clusters/alice/dev/k8s/api/v1/namespaces', { method: 'DELETE' })
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 })
  })

  test("the contract's /proxy/ routes keep the platform's error body", async () => {
    const l = await kubectlLab(member)
    const res = await call(l, '/api/v1/clusters/alice/nope/proxy/api/v1/namespaces', {
      headers: { authorization: `token ${l.alice.token}` },
    })
    expect(res.status).toBe(404)
    const body = (await res.json()) as Record<string, unknown>
    expect(body.message).toBe('cluster not found')
    expect(body.url).toBeString()
    expect(body.kind).toBeUndefined()
  })
})

describe('every refusal kind is a Status with the apiserver’s reason, rendered in one place', () => {
  test('401, 403, 404, 405, 429 and 502 on the kubectl endpoint; the same refusals elsewhere keep the error body', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await deadRegistrationFixture(t, alice!.user, 'dead')
    const readOnly = (await mintToken(t.deps.db, alice!.user.id, { name: 'ro', scopes: ['read:cluster'] })).plaintext
    const k8s = '/api/v1/clusters/alice/dead/k8s/api/v1/namespaces'
    const statusOf = async (res: Response) => ({ code: res.status, body: (await res.json()) as Record<string, unknown> })
    const cases: [string, Promise<Response>, number, string][] = [
      ['no valid token', t.request('GET', k8s, { token: 'f'.repeat(40) }), 401, 'Unauthorized'],
      ['a read-only token writing', t.request('POST', k8s, { token: readOnly, body: {} }), 403, 'Forbidden'],
      ['a cluster that does not exist', t.request('GET', '/api/v1/clusters/alice/nope/k8s/api', { token: alice!.token }), 404, 'NotFound'],
      ['a method Kubernetes does not take', t.request('PROPFIND', k8s, { token: alice!.token }), 405, 'MethodNotAllowed'],
      ['a cluster that cannot be reached', t.request('GET', k8s, { token: alice!.token }), 502, 'InternalError'],
    ]
    for (const [what, answer, code, reason] of cases) {
      const { code: status, body } = await statusOf(await answer)
      expect({ what, status, kind: body.kind, reason: body.reason, code: body.code }).toEqual({
        what,
        status: code,
        kind: 'Status',
        reason,
        code,
      })
      expect(body.message).toBeString()
    }
    let limited: Response | undefined
    for (let attempt = 0; attempt < 30 && limited?.status !== 429; attempt++)
      limited = await t.request('GET', k8s, { headers: { authorization: basic('alice', 'wrong password') } })
    expect(await statusOf(limited!)).toMatchObject({ code: 429, body: { kind: 'Status', reason: 'TooManyRequests', code: 429 } })
    const elsewhere = await t.request('GET', '/api/v1/clustersv2/alice/nope', { token: alice!.token })
    expect(await elsewhere.json()).toEqual({ message: 'cluster not found', url: expect.any(String) })
  })
})
