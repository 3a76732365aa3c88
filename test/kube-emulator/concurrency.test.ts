import { afterEach, expect, test } from 'bun:test'
import { emulator, stopAll } from './fixtures'

afterEach(stopAll)

test('50 parallel updates of one configmap with the same resourceVersion → exactly one 200, 49 × 409', async () => {
  const k = await emulator()
  const { body: cm } = await k.json('GET', '/api/v1/namespaces/demo/configmaps/cm2')
  const statuses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      k.request('PUT', '/api/v1/namespaces/demo/configmaps/cm2', { body: { ...cm, data: { writer: String(i) } } }).then((r) => r.status),
    ),
  )
  expect(statuses.filter((s) => s === 200)).toHaveLength(1)
  expect(statuses.filter((s) => s === 409)).toHaveLength(49)
})

test('50 parallel merge patches carrying the same resourceVersion → exactly one 200, the rest 409', async () => {
  const k = await emulator()
  const { body: cm } = await k.json('GET', '/api/v1/namespaces/demo/configmaps/cm2')
  const statuses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      k
        .request('PATCH', '/api/v1/namespaces/demo/configmaps/cm2', {
          body: { metadata: { resourceVersion: cm.metadata.resourceVersion }, data: { writer: String(i) } },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        })
        .then((r) => r.status),
    ),
  )
  expect(statuses.filter((s) => s === 200)).toHaveLength(1)
  expect(statuses.filter((s) => s === 409)).toHaveLength(49)
})

test('50 parallel creates of one name → one 201, 49 × 409 AlreadyExists', async () => {
  const k = await emulator()
  const statuses = await Promise.all(
    Array.from({ length: 50 }, () =>
      k.request('POST', '/api/v1/namespaces/demo/configmaps', { body: { metadata: { name: 'race' } } }).then((r) => r.status),
    ),
  )
  expect(statuses.filter((s) => s === 201)).toHaveLength(1)
  expect(statuses.filter((s) => s === 409)).toHaveLength(49)
})

test('20 parallel scale PUTs without a resourceVersion → all 200 (unconditional), the last one wins', async () => {
  const k = await emulator()
  const statuses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      k
        .request('PUT', '/apis/apps/v1/namespaces/demo/deployments/web/scale', { body: { spec: { replicas: i % 3 } } })
        .then((r) => r.status),
    ),
  )
  expect(statuses.every((s) => s === 200)).toBe(true)
  const { body } = await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/web/scale')
  expect([0, 1, 2]).toContain(body.spec.replicas)
})
