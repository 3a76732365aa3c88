import { afterEach, describe, expect, test } from 'bun:test'
import { emulator, stopAll } from './fixtures'

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
