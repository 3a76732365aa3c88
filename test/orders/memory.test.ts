import { describe, expect, test } from 'bun:test'
import { ordersRuntime } from '../../src/orders/runtime'
import { makeTestApp } from '../support/app'
import { buildRawChart, serveHelmRepo } from '../support/charts'

/** Any signed-in user can name charts: what the orders caches keep is bounded by bytes, whatever the number of charts. */

const MiB = 1024 * 1024
// PLATFORM_CHART_CACHE_MB=4: parsed charts 4 MiB, renders 1 MiB, parsed values files 0.5 MiB.
const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true', PLATFORM_CHART_CACHE_MB: '4' }
const TEMPLATE =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: {{ .Values.text | quote }}\n  b: {{ .Values.text | quote }}\n  c: {{ .Values.text | quote }}\n'
// Each chart expands to ~1.6 MiB, its values.yaml is 48 KiB and its render ~150 KiB: a few of each fit, six do not.
const letter = (i: number) => 'abcdef'[i]!
const charts = Array.from({ length: 6 }, (_, i) =>
  buildRawChart(`big-${i}`, '0.1.0', {
    'files/blob.txt': letter(i).repeat(1.5 * MiB),
    'values.yaml': `text: ${letter(i).repeat(48 * 1024)}\n`,
    'templates/cm.yaml': TEMPLATE,
  }),
)
const repo = serveHelmRepo(charts)

describe('orders caches', () => {
  test('a user orders and renders six charts that together outgrow every cache → each cache stays within its bytes, evicting; an evicted chart renders again', async () => {
    const t = await makeTestApp(ENV)
    const rt = ordersRuntime(t.deps)
    const [alice] = await t.users('alice')
    const uids: string[] = []
    for (const chart of charts) {
      const created = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
        spec: { packages: [{ chart: { name: chart.name, releaseName: 'r', namespace: 'default', url: repo.url, values: { more: 1 } } }] },
      })
      expect(created.status).toBe(200)
      uids.push((await created.json()).metadata.uid)
      expect((await t.as(alice!).get(`/api/v1/user/deploy/orders/${uids.at(-1)}/render/manifest`)).status).toBe(200)
      expect(rt.charts.parsed.bytes).toBeLessThanOrEqual(4 * MiB)
      expect(rt.renders.done.bytes).toBeLessThanOrEqual(MiB)
      expect(rt.values.parsed.bytes).toBeLessThanOrEqual(MiB / 2)
    }
    for (const cache of [rt.charts.parsed, rt.renders.done, rt.values.parsed]) {
      expect(cache.size).toBeGreaterThan(0)
      expect(cache.size).toBeLessThan(charts.length)
    }
    const again = await t.as(alice!).get(`/api/v1/user/deploy/orders/${uids[0]}/render/manifest`)
    expect(again.status).toBe(200)
    expect(await again.text()).toContain(`a: "${letter(0).repeat(48 * 1024)}"`)
  })
})
