import { afterEach, describe, expect, test } from 'bun:test'
import { type Client, emulator, stopAll } from './fixtures'

afterEach(stopAll)

const CM = '/api/v1/namespaces/demo/configmaps'
const DEPLOY = '/apis/apps/v1/namespaces/demo/deployments/web'

const patch = (k: Client, path: string, type: string, body: unknown) => k.json('PATCH', path, body, { 'Content-Type': type })

const WIDGETS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
}

describe('PATCH', () => {
  test('a merge patch with null and a new key → key removed, key added', async () => {
    const k = await emulator()
    await k.json('POST', CM, { metadata: { name: 'p' }, data: { a: '1' } })
    const { status, body } = await patch(k, `${CM}/p`, 'application/merge-patch+json', { data: { a: null, b: '2' } })
    expect(status).toBe(200)
    expect(body.data).toEqual({ b: '2' })
  })

  test('a json patch whose test fails → 422; a valid replace → 200', async () => {
    const k = await emulator()
    await k.json('POST', CM, { metadata: { name: 'p' }, data: { b: '2' } })
    const failed = await patch(k, `${CM}/p`, 'application/json-patch+json', [{ op: 'test', path: '/data/b', value: 'x' }])
    expect(failed.status).toBe(422)
    expect(failed.body.reason).toBe('Invalid')
    const ok = await patch(k, `${CM}/p`, 'application/json-patch+json', [
      { op: 'test', path: '/data/b', value: '2' },
      { op: 'replace', path: '/data/b', value: '3' },
    ])
    expect(ok.status).toBe(200)
    expect(ok.body.data.b).toBe('3')
  })

  test('a json patch with add, move, copy and remove → applied in order', async () => {
    const k = await emulator()
    await k.json('POST', CM, { metadata: { name: 'p' }, data: { a: '1' } })
    const { body } = await patch(k, `${CM}/p`, 'application/json-patch+json', [
      { op: 'add', path: '/data/b', value: '2' },
      { op: 'copy', from: '/data/a', path: '/data/c' },
      { op: 'move', from: '/data/b', path: '/data/d' },
      { op: 'remove', path: '/data/a' },
    ])
    expect(body.data).toEqual({ c: '1', d: '2' })
  })

  test('a strategic merge patch of one container → only that container changes', async () => {
    const k = await emulator()
    const { status, body } = await patch(k, DEPLOY, 'application/strategic-merge-patch+json', {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } },
    })
    expect(status).toBe(200)
    const containers = body.spec.template.spec.containers
    expect(containers.map((c: any) => [c.name, c.image])).toEqual([
      ['app', 'nginx:2'],
      ['side', 'busybox:latest'],
    ])
    expect(containers[0].ports).toEqual([{ containerPort: 80, name: 'http', protocol: 'TCP' }])
  })

  test('the same body as a merge patch → the container list is replaced', async () => {
    const k = await emulator()
    const { body } = await patch(k, DEPLOY, 'application/merge-patch+json', {
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } },
    })
    expect(body.spec.template.spec.containers).toEqual([{ name: 'app', image: 'nginx:2' }])
  })

  test('a strategic merge patch merges env by name and ports by containerPort, and honours $patch: delete', async () => {
    const k = await emulator()
    const { body } = await patch(k, DEPLOY, 'application/strategic-merge-patch+json', {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                env: [
                  { name: 'NEW', value: 'x' },
                  { name: 'MODE', value: 'prod' },
                ],
                ports: [{ containerPort: 443, name: 'https' }],
              },
              { name: 'side', $patch: 'delete' },
            ],
          },
        },
      },
    })
    const [app, ...rest] = body.spec.template.spec.containers
    expect(rest).toEqual([])
    expect(app.env).toEqual([
      { name: 'MODE', value: 'prod' },
      { name: 'NEW', value: 'x' },
    ])
    expect(app.ports.map((p: any) => p.containerPort)).toEqual([80, 443])
  })

  test('a strategic merge patch adds a volume and its mount without touching the others', async () => {
    const k = await emulator()
    const { body } = await patch(k, DEPLOY, 'application/strategic-merge-patch+json', {
      spec: {
        template: {
          spec: {
            volumes: [{ name: 'cache', emptyDir: {} }],
            containers: [{ name: 'app', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
          },
        },
      },
    })
    expect(body.spec.template.spec.volumes).toEqual([{ name: 'cache', emptyDir: {} }])
    expect(body.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['app', 'side'])
  })

  test('a strategic merge patch on a custom resource → 415 UnsupportedMediaType', async () => {
    const k = await emulator()
    await k.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', WIDGETS_CRD)
    await k.json('POST', '/apis/example.com/v1/namespaces/demo/widgets', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 1 },
    })
    const { status, body } = await patch(k, '/apis/example.com/v1/namespaces/demo/widgets/w1', 'application/strategic-merge-patch+json', {
      spec: { size: 2 },
    })
    expect(status).toBe(415)
    expect(body.reason).toBe('UnsupportedMediaType')
  })

  test('an apply patch without fieldManager → 422 on PatchOptions', async () => {
    const k = await emulator()
    const res = await k.request('PATCH', `${CM}/cm1`, {
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1}\n',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    )
  })

  test('an apply patch with fieldManager on a missing object → 201 created from the YAML', async () => {
    const k = await emulator()
    const res = await k.request('PATCH', `${CM}/fresh?fieldManager=t`, {
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\ndata:\n  a: "1"\n',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    })
    expect(res.status).toBe(201)
    expect((await res.json()).data).toEqual({ a: '1' })
  })

  test('an apply patch on an existing deployment → the configuration merged in, other containers intact', async () => {
    const k = await emulator()
    const body = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:3' }] } } },
    })
    const res = await k.request('PATCH', `${DEPLOY}?fieldManager=t`, { body, headers: { 'Content-Type': 'application/apply-patch+yaml' } })
    expect(res.status).toBe(200)
    const d = await res.json()
    expect(d.spec.template.spec.containers.map((c: any) => c.image)).toEqual(['nginx:3', 'busybox:latest'])
  })

  test('an apply patch of another kind or broken YAML → 400', async () => {
    const k = await emulator()
    const headers = { 'Content-Type': 'application/apply-patch+yaml' }
    expect(
      (await k.request('PATCH', `${CM}/cm1?fieldManager=t`, { body: 'apiVersion: v1\nkind: Secret\nmetadata: {name: cm1}\n', headers }))
        .status,
    ).toBe(400)
    expect((await k.request('PATCH', `${CM}/cm1?fieldManager=t`, { body: 'a: [b', headers })).status).toBe(400)
    expect((await k.request('PATCH', `${CM}/cm1?fieldManager=t`, { body: '['.repeat(50_000), headers })).status).toBe(400)
  })

  test('a text/plain patch → 415', async () => {
    const k = await emulator()
    expect((await k.request('PATCH', `${CM}/cm1`, { body: 'x', headers: { 'Content-Type': 'text/plain' } })).status).toBe(415)
  })

  test('a patch carrying a stale resourceVersion → 409 Conflict', async () => {
    const k = await emulator()
    const { body: cm } = await k.json('GET', `${CM}/cm1`)
    await patch(k, `${CM}/cm1`, 'application/merge-patch+json', { data: { a: '1' } })
    const { status } = await patch(k, `${CM}/cm1`, 'application/merge-patch+json', {
      metadata: { resourceVersion: cm.metadata.resourceVersion },
      data: { a: '2' },
    })
    expect(status).toBe(409)
  })

  test('malformed patches → 400, never 500', async () => {
    const k = await emulator()
    for (const [type, body] of [
      ['application/merge-patch+json', '{'],
      ['application/json-patch+json', '{"op":"add"}'],
      ['application/json-patch+json', '[{"op":"frobnicate","path":"/x"}]'],
      ['application/json-patch+json', '[{"op":"add","path":"data"}]'],
      ['application/strategic-merge-patch+json', '[1]'],
      ['application/merge-patch+json', '{"metadata":null}'],
    ] as const) {
      const res = await k.request('PATCH', `${CM}/cm1`, { body, headers: { 'Content-Type': type } })
      expect([type, body, res.status]).toEqual([type, body, 400])
    }
  })

  test('a json patch removing a missing path → 422', async () => {
    const k = await emulator()
    const { status } = await patch(k, `${CM}/cm1`, 'application/json-patch+json', [{ op: 'remove', path: '/data/nope' }])
    expect(status).toBe(422)
  })

  test('a patch of a missing object → 404', async () => {
    const k = await emulator()
    const { status, body } = await patch(k, `${CM}/ghost`, 'application/merge-patch+json', { data: {} })
    expect(status).toBe(404)
    expect(body.message).toBe('configmaps "ghost" not found')
  })
})
