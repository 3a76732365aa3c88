import { afterEach, expect, test } from 'bun:test'
import { emulator, readWatchEvents, stopAll } from '../kube-emulator/fixtures'

afterEach(stopAll)

const CM = '/api/v1/namespaces/demo/configmaps'

test('a client watches from a resourceVersion the emulator has not reached (kept from before a restart) → 200, after the wait an ERROR 504 "Too large resource version", and the stream ends so the client relists', async () => {
  const k = await emulator({ tooLargeResourceVersionWaitMs: 300 })
  const { body: list } = await k.json('GET', CM)
  const current = Number(list.metadata.resourceVersion)
  const started = performance.now()
  const res = await k.get(`${CM}?watch=1&resourceVersion=${current + 100000}`)
  expect(res.status).toBe(200)
  const { events, ended } = await readWatchEvents(res, 1)
  // Paced as the apiserver paces it: a client that simply re-watches (client-node) does not spin.
  expect(performance.now() - started).toBeGreaterThanOrEqual(250)
  expect(events).toHaveLength(1)
  expect(events[0].type).toBe('ERROR')
  expect(events[0].object).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    code: 504,
    reason: 'Timeout',
    message: `Timeout: Too large resource version: ${current + 100000}, current: ${current}`,
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  })
  expect(ended).toBe(true)
})

test('a client watches from the current resourceVersion → no error; a later create arrives as ADDED', async () => {
  const k = await emulator()
  const { body: list } = await k.json('GET', CM)
  const res = await k.get(`${CM}?watch=1&resourceVersion=${list.metadata.resourceVersion}`)
  const reading = readWatchEvents(res, 1)
  await k.json('POST', CM, { metadata: { name: 'after' } })
  const { events } = await reading
  expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'after']])
})

test('a client watches from a resourceVersion just ahead of the store, which catches up within the wait → no error, the events after it arrive', async () => {
  const k = await emulator({ tooLargeResourceVersionWaitMs: 2000 })
  const { body: list } = await k.json('GET', CM)
  const ahead = Number(list.metadata.resourceVersion) + 1
  const res = await k.get(`${CM}?watch=1&resourceVersion=${ahead}`)
  const reading = readWatchEvents(res, 1)
  await k.json('POST', CM, { metadata: { name: 'catch-up' } })
  await k.json('POST', CM, { metadata: { name: 'after-it' } })
  const { events } = await reading
  expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'after-it']])
})
