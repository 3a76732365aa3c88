import { afterEach, describe, expect, test } from 'bun:test'
import { emulator, stopAll } from './fixtures'

afterEach(stopAll)

const CM = '/api/v1/namespaces/demo/configmaps'

describe('create', () => {
  test('an admin creates a configmap → 201 with uid, creationTimestamp and a decimal resourceVersion', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { metadata: { name: 'n1' }, data: { a: '1' } })
    expect(status).toBe(201)
    expect(body).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n1', namespace: 'demo' }, data: { a: '1' } })
    expect(body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(body.metadata.resourceVersion).toMatch(/^\d+$/)
  })

  test('an admin creates the same name twice → 409 AlreadyExists with the real message', async () => {
    const k = await emulator()
    await k.json('POST', CM, { metadata: { name: 'n1' } })
    const { status, body } = await k.json('POST', CM, { metadata: { name: 'n1' } })
    expect(status).toBe(409)
    expect(body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'AlreadyExists',
      code: 409,
      message: 'configmaps "n1" already exists',
      details: { name: 'n1', kind: 'configmaps' },
    })
  })

  test('an admin creates with generateName → a name of the prefix and five safe characters', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { metadata: { generateName: 'gen-' } })
    expect(status).toBe(201)
    expect(body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
  })

  test('an admin creates without name or generateName → 422 Invalid naming metadata.name', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { data: {} })
    expect(status).toBe(422)
    expect(body.reason).toBe('Invalid')
    expect(body.details.causes).toContainEqual({ reason: 'FieldValueRequired', message: 'Required value', field: 'metadata.name' })
  })

  test('an admin creates with an upper-case name → 422 with the RFC 1123 message', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { metadata: { name: 'Bad_Name' } })
    expect(status).toBe(422)
    expect(body.message).toStartWith(
      'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
    )
  })

  test('an admin creates a namespace with a dot in its name → 422 with one RFC 1123 label cause', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', '/api/v1/namespaces', { metadata: { name: 'a.b' } })
    expect(status).toBe(422)
    expect(body.details.causes).toHaveLength(1)
    expect(body.message).toContain('a lowercase RFC 1123 label must consist of')
  })

  test('an admin creates in a missing namespace → 404 namespaces "nope" not found', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', '/api/v1/namespaces/nope/configmaps', { metadata: { name: 'x' } })
    expect(status).toBe(404)
    expect(body.message).toBe('namespaces "nope" not found')
  })

  test('an admin posts a body whose namespace differs from the URL → 400', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { metadata: { name: 'x', namespace: 'other' } })
    expect(status).toBe(400)
    expect(body.reason).toBe('BadRequest')
  })

  test('an admin posts a Secret to the configmaps collection → 400 naming both kinds', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', CM, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } })
    expect(status).toBe(400)
    expect(body.message).toBe('the kind in the data (Secret) does not match the expected kind (ConfigMap)')
  })

  test('an admin creates a deployment whose selector misses the template labels → 422 Deployment.apps', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', '/apis/apps/v1/namespaces/demo/deployments', {
      metadata: { name: 'bad' },
      spec: {
        selector: { matchLabels: { app: 'x' } },
        template: { metadata: { labels: { app: 'y' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    })
    expect(status).toBe(422)
    expect(body.message).toStartWith('Deployment.apps "bad" is invalid: spec.template.metadata.labels')
  })
})

describe('get and errors', () => {
  test('an admin gets a missing configmap → 404 Status `configmaps "missing" not found`', async () => {
    const k = await emulator()
    const { status, body } = await k.json('GET', `${CM}/missing`)
    expect(status).toBe(404)
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    })
  })

  test('an admin gets a missing deployment → the message names deployments.apps', async () => {
    const k = await emulator()
    const { body } = await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/missing')
    expect(body.message).toBe('deployments.apps "missing" not found')
  })

  test('an admin asks for an unknown group → 404 the server could not find the requested resource', async () => {
    const k = await emulator()
    const { status, body } = await k.json('GET', '/apis/nosuch.group/v1/foos')
    expect(status).toBe(404)
    expect(body).toMatchObject({ reason: 'NotFound', message: 'the server could not find the requested resource', details: {} })
  })

  test('a caller without a token → 401 Status Unauthorized', async () => {
    const k = await emulator()
    const res = await k.request('GET', '/api/v1/namespaces', { token: null })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 })
  })

  test('a caller with a wrong token → 401 and the token is not echoed', async () => {
    const k = await emulator()
    const res = await k.request('GET', '/api/v1/namespaces', { token: 'sekrit-token-value' })
    expect(res.status).toBe(401)
    expect(await res.text()).not.toContain('sekrit')
  })

  test('a user limited to demo lists pods in kube-system → 403 in the authorizer wording', async () => {
    const k = await emulator({ users: { t: { name: 'dev', namespaces: ['demo'] } } })
    const res = await k.request('GET', '/api/v1/namespaces/kube-system/pods', { token: 't' })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(
      'pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "kube-system"',
    )
    expect((await k.request('GET', '/api/v1/namespaces/demo/pods', { token: 't' })).status).toBe(200)
  })

  test('a read-only user deletes a configmap → 403 naming the object and verb', async () => {
    const k = await emulator({ users: { r: { name: 'viewer', verbs: ['get', 'list', 'watch'] } } })
    const res = await k.request('DELETE', `${CM}/cm1`, { token: 'r' })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(
      'configmaps "cm1" is forbidden: User "viewer" cannot delete resource "configmaps" in API group "" in the namespace "demo"',
    )
  })
})

describe('update', () => {
  test('an admin updates with the current resourceVersion → 200 and a greater resourceVersion', async () => {
    const k = await emulator()
    const { body: cm } = await k.json('GET', `${CM}/cm2`)
    const { status, body } = await k.json('PUT', `${CM}/cm2`, { ...cm, data: { x: 'y' } })
    expect(status).toBe(200)
    expect(Number(body.metadata.resourceVersion)).toBeGreaterThan(Number(cm.metadata.resourceVersion))
    expect(body.data).toEqual({ x: 'y' })
  })

  test('an admin updates with a stale resourceVersion → 409 Conflict with the retry message', async () => {
    const k = await emulator()
    const { body: cm } = await k.json('GET', `${CM}/cm2`)
    await k.json('PUT', `${CM}/cm2`, { ...cm, data: { x: '1' } })
    const { status, body } = await k.json('PUT', `${CM}/cm2`, { ...cm, data: { x: '2' } })
    expect(status).toBe(409)
    expect(body).toMatchObject({
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on configmaps "cm2": the object has been modified; please apply your changes to the latest version and try again',
    })
  })

  test('an admin updates without a resourceVersion → 200 (unconditional update)', async () => {
    const k = await emulator()
    const { status } = await k.json('PUT', `${CM}/cm2`, { metadata: { name: 'cm2' }, data: { z: '1' } })
    expect(status).toBe(200)
  })

  test('an admin updates with a body name different from the URL → 400', async () => {
    const k = await emulator()
    const { status } = await k.json('PUT', `${CM}/cm2`, { metadata: { name: 'other' } })
    expect(status).toBe(400)
  })

  test('an admin updates a missing object → 404', async () => {
    const k = await emulator()
    const { status, body } = await k.json('PUT', `${CM}/ghost`, { metadata: { name: 'ghost' } })
    expect(status).toBe(404)
    expect(body.message).toBe('configmaps "ghost" not found')
  })

  test('an admin changes a deployment spec → generation bumps; a label change alone does not', async () => {
    const k = await emulator()
    const path = '/apis/apps/v1/namespaces/demo/deployments/api'
    const { body: d } = await k.json('GET', path)
    const { body: relabelled } = await k.json(
      'PATCH',
      path,
      { metadata: { labels: { extra: 'yes' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    expect(relabelled.metadata.generation).toBe(d.metadata.generation)
    const { body: changed } = await k.json(
      'PATCH',
      path,
      { spec: { minReadySeconds: 5 } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    expect(changed.metadata.generation).toBe(d.metadata.generation + 1)
  })
})

describe('delete', () => {
  test('an admin deletes a configmap → 200 Success Status, then GET is 404', async () => {
    const k = await emulator()
    const { status, body } = await k.json('DELETE', `${CM}/cm1`)
    expect(status).toBe(200)
    expect(body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'cm1', kind: 'configmaps' } })
    expect((await k.get(`${CM}/cm1`)).status).toBe(404)
  })

  test('an admin deletes a pod → 200 with the deleted pod', async () => {
    const k = await emulator()
    const { body: pods } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app=api')
    const name = pods.items[0].metadata.name
    const { status, body } = await k.json('DELETE', `/api/v1/namespaces/demo/pods/${name}`)
    expect(status).toBe(200)
    expect(body).toMatchObject({ kind: 'Pod', metadata: { name } })
  })

  test('an admin deletes with a wrong uid precondition → 409 Conflict', async () => {
    const k = await emulator()
    const { status, body } = await k.json('DELETE', `${CM}/cm1`, { preconditions: { uid: 'not-the-uid' } })
    expect(status).toBe(409)
    expect(body.reason).toBe('Conflict')
  })

  test('an admin deletes an object with a finalizer → deletionTimestamp set; removing the finalizer removes it', async () => {
    const k = await emulator()
    await k.json('POST', CM, { metadata: { name: 'held', finalizers: ['example.com/hold'] } })
    const { status, body } = await k.json('DELETE', `${CM}/held`)
    expect(status).toBe(200)
    expect(body.metadata.deletionTimestamp).toBeString()
    expect((await k.get(`${CM}/held`)).status).toBe(200)
    const patched = await k.json(
      'PATCH',
      `${CM}/held`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    expect(patched.status).toBe(200)
    expect((await k.get(`${CM}/held`)).status).toBe(404)
  })

  test('an admin deletes a collection by label → the list of deleted objects; others survive', async () => {
    const k = await emulator()
    const { status, body } = await k.json('DELETE', `${CM}?labelSelector=tier%3Dfe`)
    expect(status).toBe(200)
    expect(body.kind).toBe('ConfigMapList')
    expect(body.items.map((i: any) => i.metadata.name)).toEqual(['cm1'])
    expect((await k.get(`${CM}/cm2`)).status).toBe(200)
  })

  test('an admin posts to an item path → 405 MethodNotAllowed', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', `${CM}/cm1`, { metadata: { name: 'cm1' } })
    expect(status).toBe(405)
    expect(body.reason).toBe('MethodNotAllowed')
  })
})

describe('bad input never crashes', () => {
  test('a 100 000-deep JSON body → 400, and the server still answers', async () => {
    const k = await emulator()
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    const res = await k.request('POST', CM, { body: deep })
    expect(res.status).toBe(400)
    expect((await k.get(CM)).status).toBe(200)
  })

  test('a 4 MiB body → 413', async () => {
    const k = await emulator()
    const res = await k.request('POST', CM, { body: { metadata: { name: 'big' }, data: { a: 'x'.repeat(4 * 1024 * 1024) } } })
    expect(res.status).toBe(413)
  })

  test('malformed JSON → 400 BadRequest', async () => {
    const k = await emulator()
    const res = await k.request('POST', CM, { body: '{"metadata": ' })
    expect(res.status).toBe(400)
    expect((await res.json()).reason).toBe('BadRequest')
  })

  test('a JSON array as an object body → 400', async () => {
    const k = await emulator()
    expect((await k.request('POST', CM, { body: '[1,2]' })).status).toBe(400)
  })

  test('metadata that is not an object → 400', async () => {
    const k = await emulator()
    expect((await k.request('POST', CM, { body: { metadata: 'x' } })).status).toBe(400)
  })

  test('labels that are not a map → 400 with the decoder message, not 500', async () => {
    const k = await emulator()
    const res = await k.request('POST', CM, { body: { metadata: { name: 'x', labels: 'oops' } } })
    expect(res.status).toBe(400)
    expect((await res.json()).message).toContain('ObjectMeta.metadata.labels')
  })

  test('a path with broken percent-encoding → 400, not 500', async () => {
    const k = await emulator()
    const res = await k.request('GET', '/api/v1/namespaces/demo/configmaps/%E0%A4%A')
    expect(res.status).toBe(400)
  })

  test('a merge patch with a __proto__ key → 400 and no object gains a prototype field', async () => {
    const k = await emulator()
    const res = await k.request('PATCH', `${CM}/cm1`, {
      body: '{"data":{"__proto__":{"polluted":"yes"}}}',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    })
    expect(res.status).toBe(400)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test('a watch with a non-numeric resourceVersion → 400 before any stream', async () => {
    const k = await emulator()
    expect((await k.get(`${CM}?watch=1&resourceVersion=abc`)).status).toBe(400)
  })
})
