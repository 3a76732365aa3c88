import { afterEach, describe, expect, test } from 'bun:test'
import { apiPod, type Client, emulator, stopAll } from './fixtures'

afterEach(stopAll)

const users = { 'dev-token': { name: 'dev', groups: ['developers'], namespaces: ['demo'] } }
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews'

describe('impersonation', () => {
  test("the admin impersonates dev → dev's namespace limits apply", async () => {
    const k = await emulator({ users })
    const as = { 'Impersonate-User': 'dev' }
    expect((await k.request('GET', '/api/v1/namespaces/demo/pods', { headers: as })).status).toBe(200)
    const res = await k.request('GET', '/api/v1/namespaces/kube-system/pods', { headers: as })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toContain('User "dev" cannot list resource "pods"')
  })

  test('the admin impersonates an unknown user → no resource permissions, still discovery', async () => {
    const k = await emulator()
    const as = { 'Impersonate-User': 'nobody' }
    expect((await k.request('GET', '/api/v1/namespaces/demo/configmaps', { headers: as })).status).toBe(403)
    expect((await k.request('GET', '/api/v1', { headers: as })).status).toBe(200)
  })

  test('a namespace-limited user tries to impersonate the admin → 403 cannot impersonate users', async () => {
    const k = await emulator({ users })
    const res = await k.request('GET', '/api/v1/namespaces/demo/pods', { token: 'dev-token', headers: { 'Impersonate-User': 'admin' } })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(
      'users "admin" is forbidden: User "dev" cannot impersonate resource "users" in API group "" at the cluster scope',
    )
  })

  test('Impersonate-Group without Impersonate-User → 400', async () => {
    const k = await emulator()
    expect((await k.request('GET', '/api/v1/namespaces', { headers: { 'Impersonate-Group': 'x' } })).status).toBe(400)
  })
})

describe('SelfSubjectReview', () => {
  test('dev asks who they are → username and groups', async () => {
    const k = await emulator({ users })
    const res = await k.request('POST', WHOAMI, {
      token: 'dev-token',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    })
    expect(res.status).toBe(201)
    expect((await res.json()).status.userInfo).toEqual({ username: 'dev', groups: ['developers'] })
  })

  test('the admin impersonating a user and an org group asks who they are → the impersonated identity', async () => {
    const k = await emulator()
    const res = await k.request('POST', WHOAMI, {
      body: {},
      headers: { 'Impersonate-User': 'olga', 'Impersonate-Group': 'platform:org:acme' },
    })
    expect((await res.json()).status.userInfo).toEqual({ username: 'olga', groups: ['platform:org:acme', 'system:authenticated'] })
  })
})

describe('RBAC bindings', () => {
  const RBAC = '/apis/rbac.authorization.k8s.io/v1'
  const REVIEW = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'
  const olgaOf = (group: string) => ({ 'Impersonate-User': 'olga', 'Impersonate-Group': group })
  const TEAM = olgaOf('platform:team:acme:ops')

  /** Stores a Role (or ClusterRole, without a namespace) and a binding of it to `subject`. */
  async function grant(k: Client, namespace: string | undefined, rules: unknown[], subject: { kind: string; name: string }) {
    const scope = namespace ? `${RBAC}/namespaces/${namespace}` : RBAC
    const roleKind = namespace ? 'Role' : 'ClusterRole'
    expect(
      (await k.json('POST', `${scope}/${namespace ? 'roles' : 'clusterroles'}`, { metadata: { name: 'granted' }, rules })).status,
    ).toBe(201)
    const binding = { metadata: { name: 'grant' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: 'granted' } }
    const bindings = `${scope}/${namespace ? 'rolebindings' : 'clusterrolebindings'}`
    expect((await k.json('POST', bindings, { ...binding, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }] })).status).toBe(
      201,
    )
  }
  const status = async (k: Client, method: string, path: string, headers: Record<string, string>) =>
    (await k.request(method, path, { headers })).status

  test("a RoleBinding of a team's group to a Role reading pods in demo → that group reads pods in demo only, and nothing else", async () => {
    const k = await emulator()
    await grant(k, 'demo', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }], {
      kind: 'Group',
      name: 'platform:team:acme:ops',
    })
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/pods', TEAM)).toBe(200)
    expect(await status(k, 'GET', `/api/v1/namespaces/demo/pods/${await apiPod(k)}`, TEAM)).toBe(200)
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/pods?watch=true&timeoutSeconds=1', TEAM)).toBe(200)
    const elsewhere = await k.request('GET', '/api/v1/namespaces/kube-system/pods', { headers: TEAM })
    expect(elsewhere.status).toBe(403)
    expect((await elsewhere.json()).message).toBe(
      'pods is forbidden: User "olga" cannot list resource "pods" in API group "" in the namespace "kube-system"',
    )
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/configmaps', TEAM)).toBe(403)
    expect(await status(k, 'DELETE', `/api/v1/namespaces/demo/pods/${await apiPod(k)}`, TEAM)).toBe(403)
    expect(await status(k, 'GET', '/api/v1/pods', TEAM)).toBe(403)
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/pods', olgaOf('platform:org:acme'))).toBe(403)
    // One Impersonate-Group line per group, as the platform sends them.
    const both = new Headers({ 'Impersonate-User': 'olga' })
    both.append('Impersonate-Group', 'platform:org:acme')
    both.append('Impersonate-Group', 'platform:team:acme:ops')
    const res = await fetch(`${k.emulator.url}/api/v1/namespaces/demo/pods`, {
      headers: { authorization: `Bearer ${k.emulator.token}`, ...Object.fromEntries(both) },
      tls: { ca: k.emulator.caCertPem },
    } as RequestInit)
    expect(res.status).toBe(200)
  })

  test('a SelfSubjectAccessReview answers as the request would, naming the binding that allows it', async () => {
    const k = await emulator()
    await grant(k, 'demo', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }], { kind: 'Group', name: 'platform:team:acme:ops' })
    const review = async (namespace: string) => {
      const res = await k.request('POST', REVIEW, {
        headers: TEAM,
        body: { spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace } } },
      })
      expect(res.status).toBe(201)
      return (await res.json()).status
    }
    expect(await review('demo')).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "grant/demo" of Role "granted" to Group "platform:team:acme:ops"',
    })
    expect(await review('kube-system')).toEqual({ allowed: false })
  })

  test('pods/log, resourceNames and a ClusterRole bound in one namespace: each matches only what it names', async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    const rules = [
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get'] },
    ]
    expect((await k.json('POST', `${RBAC}/clusterroles`, { metadata: { name: 'logs' }, rules })).status).toBe(201)
    const binding = {
      metadata: { name: 'logs' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'logs' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'olga' }],
    }
    expect((await k.json('POST', `${RBAC}/namespaces/demo/rolebindings`, binding)).status).toBe(201)
    const olga = { 'Impersonate-User': 'olga' }
    expect(await status(k, 'GET', `/api/v1/namespaces/demo/pods/${pod}/log`, olga)).toBe(200)
    expect(await status(k, 'GET', `/api/v1/namespaces/demo/pods/${pod}`, olga)).toBe(403)
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/configmaps/app-config', olga)).toBe(404)
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/configmaps/other', olga)).toBe(403)
    expect(await status(k, 'GET', '/api/v1/namespaces/demo/configmaps', olga)).toBe(403)
    expect(await status(k, 'GET', '/api/v1/namespaces/kube-system/configmaps/app-config', olga)).toBe(403)
  })

  test('a ClusterRoleBinding to a ClusterRole of wildcards → allowed everywhere; a namespace-limited user gains what a binding to them grants', async () => {
    const k = await emulator({ users })
    await grant(k, undefined, [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], { kind: 'User', name: 'olga' })
    const olga = { 'Impersonate-User': 'olga' }
    expect(await status(k, 'GET', '/api/v1/namespaces/kube-system/configmaps', olga)).toBe(200)
    expect(await status(k, 'GET', '/apis/apps/v1/deployments', olga)).toBe(200)
    expect(await status(k, 'GET', '/api/v1/namespaces/kube-system/pods', { 'Impersonate-User': 'dev' })).toBe(403)
    await grant(k, 'kube-system', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }], { kind: 'User', name: 'dev' })
    expect((await k.request('GET', '/api/v1/namespaces/kube-system/pods', { token: 'dev-token' })).status).toBe(200)
    expect((await k.request('GET', '/api/v1/namespaces/demo/pods', { token: 'dev-token' })).status).toBe(200)
    expect((await k.request('GET', '/api/v1/namespaces/kube-system/configmaps', { token: 'dev-token' })).status).toBe(403)
  })
})
