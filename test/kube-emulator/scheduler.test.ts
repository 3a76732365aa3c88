import { afterEach, expect, test } from 'bun:test'
import { emulator, eventually, stopAll } from '../kube-emulator/fixtures'

afterEach(stopAll)

const PODS = '/api/v1/namespaces/demo/pods'
const cordon = (k: Awaited<ReturnType<typeof emulator>>, node: string) =>
  k.json('PATCH', `/api/v1/nodes/${node}`, { spec: { unschedulable: true } }, { 'Content-Type': 'application/merge-patch+json' })

test('an admin cordons node-2 (kubectl cordon/drain) and scales web up → every new pod is scheduled on node-1', async () => {
  const k = await emulator()
  const { body: seeded } = await k.json('GET', `${PODS}?labelSelector=app%3Dweb`)
  const old = new Set(seeded.items.map((p: any) => p.metadata.name))
  expect((await cordon(k, 'node-2')).status).toBe(200)
  const { status } = await k.json(
    'PATCH',
    '/apis/apps/v1/namespaces/demo/deployments/web/scale',
    { spec: { replicas: 6 } },
    { 'Content-Type': 'application/merge-patch+json' },
  )
  expect(status).toBe(200)
  const fresh = await eventually(async () => {
    const { body } = await k.json('GET', `${PODS}?labelSelector=app%3Dweb`)
    const added = body.items.filter((p: any) => !old.has(p.metadata.name))
    return added.length === 4 && added.every((p: any) => p.status.phase === 'Running') && added
  })
  expect(fresh.map((p: any) => p.spec.nodeName)).toEqual(['node-1', 'node-1', 'node-1', 'node-1'])
})

test('an admin cordons every node and creates a pod → it stays Pending on no node', async () => {
  const k = await emulator()
  await cordon(k, 'node-1')
  await cordon(k, 'node-2')
  const { status } = await k.json('POST', PODS, { metadata: { name: 'stuck' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } })
  expect(status).toBe(201)
  await k.emulator.settled()
  const { body } = await k.json('GET', `${PODS}/stuck`)
  expect(body.status.phase).toBe('Pending')
  expect(body.spec.nodeName ?? '').toBe('')
})

test('an admin uncordons a node while a pod waits for one → the pod is scheduled there and runs', async () => {
  const k = await emulator()
  await cordon(k, 'node-1')
  await cordon(k, 'node-2')
  await k.json('POST', PODS, { metadata: { name: 'waiting' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } })
  await k.json('PATCH', '/api/v1/nodes/node-2', { spec: { unschedulable: null } }, { 'Content-Type': 'application/merge-patch+json' })
  const pod = await eventually(async () => {
    const { body } = await k.json('GET', `${PODS}/waiting`)
    return body.status.phase === 'Running' && body
  })
  expect(pod.spec.nodeName).toBe('node-2')
})
