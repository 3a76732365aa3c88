import { afterEach, expect, test } from 'bun:test'
import { emulator, stopAll } from '../kube-emulator/fixtures'

afterEach(stopAll)

const CM = '/api/v1/namespaces/demo/configmaps'

test('a client lists with resourceVersionMatch but no resourceVersion → 422 Invalid on ListOptions, as the apiserver validates it', async () => {
  const k = await emulator()
  const { status, body } = await k.json('GET', `${CM}?resourceVersionMatch=NotOlderThan`)
  expect(status).toBe(422)
  expect(body).toMatchObject({
    kind: 'Status',
    reason: 'Invalid',
    code: 422,
    message:
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    details: { causes: [{ reason: 'FieldValueForbidden', field: 'resourceVersionMatch' }] },
  })
})

test('a client lists with an unknown resourceVersionMatch → 422 naming the supported values', async () => {
  const k = await emulator()
  const { status, body } = await k.json('GET', `${CM}?resourceVersion=1&resourceVersionMatch=Newest`)
  expect(status).toBe(422)
  expect(body.message).toBe(
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
  )
})

test('a client continues a list and also names a resourceVersion → 400 BadRequest', async () => {
  const k = await emulator()
  const { body: page } = await k.json('GET', `${CM}?limit=1`)
  const { status, body } = await k.json(
    'GET',
    `${CM}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}&resourceVersion=${page.metadata.resourceVersion}`,
  )
  expect(status).toBe(400)
  expect(body).toMatchObject({ reason: 'BadRequest', message: 'specifying resource version is not allowed when using continue' })
})

test('a client lists with resourceVersion=0 or a matching resourceVersionMatch → 200', async () => {
  const k = await emulator()
  expect((await k.get(`${CM}?resourceVersion=0`)).status).toBe(200)
  const { body: list } = await k.json('GET', CM)
  expect((await k.get(`${CM}?resourceVersion=${list.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`)).status).toBe(200)
  const { body: page } = await k.json('GET', `${CM}?limit=1`)
  expect((await k.get(`${CM}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}&resourceVersion=0`)).status).toBe(200)
})
