import { describe, expect, test } from 'bun:test'
import { ordersRuntime } from '../../src/orders/runtime'
import { makeTestApp } from '../support/app'
import { buildRawChart, connectionCanary, serveHelmRepo, tgzOf } from '../support/charts'

/**
 * A chart's values.schema.json may make Helm fetch what its `$ref`s name while it renders: a URL
 * on loopback (past the proxy Helm's environment points nowhere), a file of the server. Such
 * charts are refused when they are checked, and Helm runs without a network besides; the canary
 * on 127.0.0.4 proves nothing reached out.
 */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const canary = connectionCanary('127.0.0.4')
const remote = (path: string) => `http://${canary.host}/${path}`
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n'
const schemaChart = (name: string, schema: unknown, more: Record<string, string | Uint8Array> = {}) =>
  buildRawChart(name, '0.1.0', { 'templates/cm.yaml': CM, 'values.schema.json': JSON.stringify(schema), ...more })

const SUB_SCHEMA = JSON.stringify({ type: 'object', properties: { x: { $ref: remote('packed') } } })
const variants = [
  { chart: schemaChart('top', { $ref: remote('top') }), file: 'values.schema.json', ref: remote('top') },
  {
    chart: schemaChart('nested', { type: 'object', properties: { a: { properties: { b: { $ref: remote('nested') } } } } }),
    file: 'values.schema.json',
    ref: remote('nested'),
  },
  { chart: schemaChart('tls', { $ref: `https://${canary.host}/tls` }), file: 'values.schema.json', ref: `https://${canary.host}/tls` },
  { chart: schemaChart('local-file', { $ref: 'file:///etc/hostname' }), file: 'values.schema.json', ref: 'file:///etc/hostname' },
  { chart: schemaChart('escape', { $ref: '../../../../etc/hostname' }), file: 'values.schema.json', ref: '../../../../etc/hostname' },
  { chart: schemaChart('based', { $id: remote('dir/'), $ref: 'other.json' }), file: 'values.schema.json', ref: 'other.json' },
  {
    chart: schemaChart('old-id', { type: 'object', properties: { p: { id: remote('old/'), $ref: 'sub.json' } } }),
    file: 'values.schema.json',
    ref: 'sub.json',
  },
  {
    chart: buildRawChart('parent-dir', '0.1.0', {
      'templates/cm.yaml': CM,
      'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n',
      'charts/sub/values.schema.json': JSON.stringify({ $ref: remote('subdir') }),
    }),
    file: 'charts/sub/values.schema.json',
    ref: remote('subdir'),
  },
  {
    // Packed by hand: `helm package` would write the subchart out as a directory.
    chart: buildRawChart('parent-tgz', '0.1.0', { 'templates/cm.yaml': CM }),
    archive: tgzOf([
      { path: 'parent-tgz/Chart.yaml', data: 'apiVersion: v2\nname: parent-tgz\nversion: 0.1.0\n' },
      { path: 'parent-tgz/templates/cm.yaml', data: CM },
      {
        path: 'parent-tgz/charts/sub-0.1.0.tgz',
        data: tgzOf([
          { path: 'sub/Chart.yaml', data: 'apiVersion: v2\nname: sub\nversion: 0.1.0\n' },
          { path: 'sub/values.schema.json', data: SUB_SCHEMA },
        ]),
      },
    ]),
    file: 'charts/sub-0.1.0.tgz/values.schema.json',
    ref: remote('packed'),
  },
]
const inward = schemaChart('inward', {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: remote('inward.json'),
  type: 'object',
  definitions: { text: { type: 'string' } },
  properties: { a: { $ref: '#/definitions/text' } },
})
const repo = serveHelmRepo([...variants.map((v) => v.chart), inward])
for (const v of variants) if ('archive' in v && v.archive) repo.override(`${v.chart.name}-0.1.0.tgz`, v.archive)

describe('a values.schema.json that names something outside itself', () => {
  test.each(variants.map((v) => [v.chart.name, v] as const))(
    'a user orders chart %p → 422 naming the file and the $ref; nothing connects to the canary',
    async (_name, { chart, file, ref }) => {
      const t = await makeTestApp(ENV)
      const before = canary.connections.length
      const [alice] = await t.users('alice')
      const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
        spec: { packages: [{ chart: { name: chart.name, releaseName: 'r', namespace: 'default', url: repo.url } }] },
      })
      // Were the order taken, its render is where Helm would reach out.
      if (res.status === 200)
        await t.as(alice!).get(`/api/v1/user/deploy/orders/${(await res.clone().json()).metadata.uid}/render/manifest`)
      expect(res.status).toBe(422)
      const message = (await res.json()).message as string
      expect(message).toContain(file)
      expect(message).toContain(JSON.stringify(ref))
      expect(canary.connections.slice(before)).toEqual([])
    },
  )

  test('a schema that refers only within itself and names its draft → the order is taken and renders', async () => {
    const t = await makeTestApp(ENV)
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: { packages: [{ chart: { name: 'inward', releaseName: 'r', namespace: 'default', url: repo.url, values: { a: 'x' } } }] },
    })
    expect(res.status).toBe(200)
    const render = await t.as(alice!).get(`/api/v1/user/deploy/orders/${(await res.json()).metadata.uid}/render/manifest`)
    expect(render.status).toBe(200)
  })

  test('Helm itself runs without a network: handed such a chart directly, it reaches nothing and the render fails', async () => {
    const t = await makeTestApp(ENV)
    const before = canary.connections.length
    const chart = schemaChart('direct', { type: 'object', properties: { a: { $ref: remote('direct') } } })
    const helm = ordersRuntime(t.deps).helm
    const rendering = helm.template({ release: 'r', namespace: 'default', chartPath: chart.tgz, valuesJson: '{"a": 1}' }, 'alice')
    await expect(rendering).rejects.toThrow(/the chart does not render/)
    expect(canary.connections.slice(before)).toEqual([])
  })
})
