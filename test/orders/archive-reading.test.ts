import { describe, expect, test } from 'bun:test'
import { readChartArchive } from '../../src/orders/charts/archive'
import { makeTestApp } from '../support/app'
import { buildChart, serveHelmRepo, tarBlocks, tgzOf } from '../support/charts'

/**
 * Tar readers disagree on crafted archives; whatever our reader makes of one is what was checked,
 * and Helm must render exactly that: the templates in the manifest are the templates our reading
 * holds, never one hidden where our reader saw data.
 */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const CHART_YAML = 'apiVersion: v2\nname: demo\nversion: 0.1.0\n'
const configMap = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`
const base = [
  { path: 'demo/Chart.yaml', data: CHART_YAML },
  { path: 'demo/templates/visible.yaml', data: configMap('visible') },
]
const hidden = tarBlocks([{ path: 'demo/templates/hidden.yaml', data: configMap('hidden') }])
const repo = serveHelmRepo([buildChart('demo', '0.1.0')])

/** Orders the archive, renders it; answers the templates Helm rendered and those our reader holds. */
async function renderedAndChecked(archive: Uint8Array): Promise<{ rendered: string[]; checked: string[] }> {
  repo.override('demo-0.1.0.tgz', archive)
  const t = await makeTestApp(ENV)
  const [alice] = await t.users('alice')
  const created = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', url: repo.url } }] },
  })
  expect(created.status).toBe(200)
  const res = await t.as(alice!).get(`/api/v1/user/deploy/orders/${(await created.json()).metadata.uid}/render/manifest`)
  expect(res.status).toBe(200)
  const rendered = [...(await res.text()).matchAll(/^# Source: demo\/(templates\/.+)$/gm)].map((m) => m[1]!)
  const checked = [...readChartArchive(archive).files.keys()].filter((path) => path.startsWith('templates/'))
  return { rendered: rendered.sort(), checked: checked.sort() }
}

describe('one reading of a chart archive', () => {
  test('a PAX size=0 record before an entry whose ustar size covers a hidden template → Helm renders exactly the templates checked', async () => {
    const { rendered, checked } = await renderedAndChecked(
      tgzOf([...base, { path: 'PaxHeader', type: 'x', data: '9 size=0\n' }, { path: 'demo/README.md', data: hidden }]),
    )
    expect(rendered).toEqual(checked)
  })

  test('a directory entry whose size covers a hidden template (Go reads no data for directories) → Helm renders exactly the templates checked', async () => {
    const { rendered, checked } = await renderedAndChecked(tgzOf([...base, { path: 'demo/docs/', type: '5', data: hidden }]))
    expect(rendered).toEqual(checked)
    expect(rendered).toEqual(['templates/visible.yaml'])
  })

  test('a GNU long name and a PAX path naming the same entry differently → Helm renders exactly the templates checked', async () => {
    const { rendered, checked } = await renderedAndChecked(
      tgzOf([
        ...base,
        { path: '././@LongLink', type: 'L', data: 'demo/templates/sneaky.yaml\0' },
        { path: 'PaxHeader', type: 'x', data: '23 path=demo/notes.txt\n' },
        { path: 'demo/placeholder', data: configMap('sneaky') },
      ]),
    )
    expect(rendered).toEqual(checked)
  })
})
