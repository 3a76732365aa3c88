import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/orders/service'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { buildChart, helm, serveHelmRepo } from '../support/charts'

/** Orders end to end: charts built by the real Helm, served by a loopback Helm repository, rendered by the real Helm. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
// Built once per file at load time: the servers stop when the file ends.
const stable = buildChart('demo', '0.2.0')
const repo = serveHelmRepo([buildChart('demo', '0.1.0'), stable, buildChart('demo', '0.3.0-rc.1')])

async function withSource(env: Record<string, string> = {}): Promise<{ t: TestApp; alice: TestUser }> {
  const t = await makeTestApp({ ...ENV, ...env })
  const admin = await t.admin()
  const res = await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'local', url: repo.url })
  expect(res.status).toBe(201)
  const [alice] = await t.users('alice')
  return { t, alice: alice! }
}

const pkg = (chart: Record<string, unknown> = {}) => ({
  chart: { name: 'demo', releaseName: 'demo', namespace: 'apps', sourceRef: { kind: 'HelmRepository', name: 'local' }, ...chart },
})

async function order(t: TestApp, who: TestUser, packages: unknown[], key = 'packages') {
  return t.as(who).send('POST', '/api/v1/user/deploy/orders', {
    apiVersion: 'x/v1',
    kind: 'Order',
    metadata: { uid: 'mine', labels: { a: 'b' } },
    spec: { [key]: packages },
  })
}

describe('POST /api/v1/user/deploy/orders', () => {
  test('a user orders a chart without a version → 200, the server sets uid, creationTimestamp and name; the latest stable version is pinned', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [pkg()])
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.apiVersion).toBe('releases.x-helm.dev/v1alpha1')
    expect(body.kind).toBe('Order')
    expect(body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(body.metadata.uid).not.toBe('mine')
    expect(body.metadata.name).toBe('demo')
    expect(body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(body.metadata.labels).toBeUndefined()
    expect(body.status).toEqual({})
    expect(body.spec.packages[0].chart.releaseName).toBe('demo')
    const manifest = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${body.metadata.uid}/render/manifest`)).text()
    expect(manifest.split('\n')[1]).toBe('# Source: local - demo@0.2.0')
  })

  test('a user sends the list as spec.items → it is echoed under items', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [pkg()], 'items')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.spec.items).toHaveLength(1)
    expect(body.spec.packages).toBeUndefined()
  })

  test('a user orders with an empty list, or without spec → 400 with the original message', async () => {
    const { t, alice } = await withSource()
    const empty = await order(t, alice, [])
    expect(empty.status).toBe(400)
    expect((await empty.json()).message).toBe(Messages.missingPackages)
    const none = await t.as(alice).send('POST', '/api/v1/user/deploy/orders', { kind: 'Order' })
    expect(none.status).toBe(400)
  })

  test('a user sends a malformed package (no releaseName, bad namespace) → 422 naming the field', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [{ chart: { name: 'demo', namespace: 'Bad_NS', sourceRef: { name: 'local' } } }])
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.errors.map((e: { field: string }) => e.field).join(' ')).toContain('releaseName')
  })

  test('a user orders a chart the repository does not have, or a version it does not have → 422', async () => {
    const { t, alice } = await withSource()
    const chart = await order(t, alice, [pkg({ name: 'nope' })])
    expect(chart.status).toBe(422)
    expect((await chart.json()).message).toContain('"nope"')
    const version = await order(t, alice, [pkg({ version: '9.9.9' })])
    expect(version.status).toBe(422)
    expect((await version.json()).message).toContain('9.9.9')
  })

  test('a user orders from an unknown source → 422', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [pkg({ sourceRef: { name: 'elsewhere' } })])
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.unknownSource('elsewhere'))
  })

  test('a user picks a version by range (~0.1) and exactly (0.3.0-rc.1) → those versions are pinned', async () => {
    const { t, alice } = await withSource()
    const ranged = await (await order(t, alice, [pkg({ version: '~0.1' })])).json()
    const exact = await (await order(t, alice, [pkg({ version: '0.3.0-rc.1' })])).json()
    const header = async (uid: string) =>
      (await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)).text()).split('\n')[1]
    expect(await header(ranged.metadata.uid)).toBe('# Source: local - demo@0.1.0')
    expect(await header(exact.metadata.uid)).toBe('# Source: local - demo@0.3.0-rc.1')
  })

  test('a user orders from a repository that is down → 502 naming the registry', async () => {
    const down = serveHelmRepo([stable])
    down.stop()
    const t = await makeTestApp(ENV)
    const admin = await t.admin()
    await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'gone', url: down.url })
    const [alice] = await t.users('alice')
    const res = await order(t, alice!, [pkg({ sourceRef: { name: 'gone' } })])
    expect(res.status).toBe(502)
    expect((await res.json()).message).toContain('chart registry "gone"')
  })

  test('a user orders a chart by its archive URL (no source) → 200 and it renders', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [
      { chart: { name: 'demo', releaseName: 'web', namespace: 'default', url: `${repo.url}/demo-0.1.0.tgz` } },
    ])
    expect(res.status).toBe(200)
    const uid = (await res.json()).metadata.uid
    const manifest = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)
    expect(manifest.status).toBe(200)
    expect((await manifest.text()).split('\n')[1]).toBe(`# Source: ${repo.url}/demo-0.1.0.tgz - demo@0.1.0`)
  })
})

describe('order list, get, delete', () => {
  test('a user lists, gets and deletes her orders; newest first with X-Total-Count', async () => {
    const { t, alice } = await withSource()
    const first = (await (await order(t, alice, [pkg()])).json()).metadata.uid
    t.clock.advance(1000)
    const second = (await (await order(t, alice, [pkg({ releaseName: 'two' })])).json()).metadata.uid
    const list = await t.as(alice).get('/api/v1/user/deploy/orders')
    expect(list.status).toBe(200)
    expect(list.headers.get('x-total-count')).toBe('2')
    expect((await list.json()).map((o: { metadata: { uid: string } }) => o.metadata.uid)).toEqual([second, first])
    expect((await (await t.as(alice).get(`/api/v1/user/deploy/orders/${first}`)).json()).metadata.uid).toBe(first)
    expect((await t.as(alice).delete(`/api/v1/user/deploy/orders/${first}`)).status).toBe(204)
    expect((await t.as(alice).get(`/api/v1/user/deploy/orders/${first}`)).status).toBe(404)
  })

  test("another user asks for, renders or deletes alice's order → 404 on every route", async () => {
    const { t, alice } = await withSource()
    const [bob] = await t.users('bob')
    const uid = (await (await order(t, alice, [pkg()])).json()).metadata.uid
    for (const path of ['', '/render/manifest', '/render/resources', '/helm3', '/yaml', '/manifests/demo.yaml'])
      expect((await t.as(bob!).get(`/api/v1/user/deploy/orders/${uid}${path}`)).status).toBe(404)
    expect((await t.as(bob!).delete(`/api/v1/user/deploy/orders/${uid}`)).status).toBe(404)
    expect((await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}`)).status).toBe(200)
  })
})

describe('render/manifest', () => {
  test('golden: the manifest is `helm template` of the same binary, chart, values and kube version, hooks placed as the original does', async () => {
    const { t, alice } = await withSource()
    const values = { replicaCount: 3, greeting: 'hi there' }
    const uid = (await (await order(t, alice, [pkg({ version: '0.2.0', values })])).json()).metadata.uid
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/plain')
    const ours = await res.text()

    const valuesFile = `${stable.dir}/../golden-values.json`
    await Bun.write(valuesFile, JSON.stringify(values))
    const bare = helm(['template', 'demo', stable.tgz, '--namespace', 'apps', '--kube-version', '1.22.0', '--values', valuesFile])
    // helm template prints manifests, then every hook; the order manifest moves pre-install hooks
    // first and drops hooks of other events (the test hook).
    const docs = bare.split(/(?=^---\n# Source: )/m)
    const isHook = (d: string) => d.includes('"helm.sh/hook"')
    const manifests = docs.filter((d) => !isHook(d))
    const pre = docs.filter((d) => /"helm.sh\/hook": pre-install/.test(d))
    const post = docs.filter((d) => /"helm.sh\/hook": post-install/.test(d))
    expect(pre).toHaveLength(1)
    expect(post).toHaveLength(1)
    const expected = `---\n# Source: local - demo@0.2.0\n${[...pre, ...manifests, ...post].join('')}\n`
    expect(ours).toBe(expected)
    expect(ours).toContain('replicas: 3')
    expect(ours).not.toContain('test-connection')
    expect(ours).not.toContain('CustomResourceDefinition')
  })

  test('a user renders twice → Helm runs once (the second answer comes from the render cache)', async () => {
    const log = `${stable.dir}/../helm-runs-${Date.now()}.log`
    const wrapper = `${stable.dir}/../helm-counting.sh`
    await Bun.write(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${import.meta.dir}/../../.tools/bin/helm' "$@"\n`)
    Bun.spawnSync(['chmod', '+x', wrapper])
    const { t, alice } = await withSource({ HELM_PATH: wrapper })
    const uid = (await (await order(t, alice, [pkg()])).json()).metadata.uid
    const one = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)).text()
    const two = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/resources`)).json()
    const three = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/manifest`)).text()
    expect(three).toBe(one)
    expect(two).toHaveLength(1)
    expect((await Bun.file(log).text()).trim().split('\n')).toEqual(['run'])
  })

  test('a valuesPatch that does not apply → 422 at order creation', async () => {
    const { t, alice } = await withSource()
    const res = await order(t, alice, [pkg({ valuesPatch: [{ op: 'replace', path: '/no/such/key', value: 1 }] })])
    expect(res.status).toBe(422)
    expect((await res.json()).message).toStartWith('valuesPatch does not apply')
  })
})

describe('render/resources', () => {
  test('a user asks for resources as json → one entry per package with crds, manifest and named resources', async () => {
    const { t, alice } = await withSource({ PLATFORM_PUBLIC_URL: 'https://platform.example' })
    const uid = (await (await order(t, alice, [pkg()])).json()).metadata.uid
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/resources?format=json`)
    expect(res.status).toBe(200)
    const [entry] = await res.json()
    expect(entry).toMatchObject({
      name: 'demo',
      version: '0.2.0',
      releaseName: 'demo',
      namespace: 'apps',
      sourceRef: { kind: 'HelmRepository', name: 'local' },
    })
    expect(entry.manifest).toEqual({
      key: `/${uid}/manifests/demo.yaml`,
      url: `https://platform.example/api/v1/user/deploy/orders/${uid}/manifests/demo.yaml`,
    })
    expect(entry.crds).toHaveLength(1)
    expect(entry.crds[0].filename).toBe('demo/crds/widgets.yaml')
    expect(entry.crds[0].key).toBe(`/${uid}/crds/widgets.demo.example.com.yaml`)
    const keys = entry.resources.map((r: { key: string }) => r.key)
    expect(keys).toContain('appsDeployment')
    expect(keys).toContain('configMap_cfg')
    expect(keys).toContain('batchJob_post')
    const deployment = entry.resources.find((r: { key: string }) => r.key === 'appsDeployment')
    expect(deployment.filename).toBe('deployment')
    // As the original: an object without a namespace gets `default` (not the release namespace).
    expect(JSON.parse(deployment.data)).toMatchObject({ kind: 'Deployment', metadata: { name: 'demo', namespace: 'default' } })
  })

  test('skipCRDs=true empties crds; the default format is yaml', async () => {
    const { t, alice } = await withSource()
    const uid = (await (await order(t, alice, [pkg()])).json()).metadata.uid
    const [entry] = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/render/resources?skipCRDs=true`)).json()
    expect(entry.crds).toEqual([])
    expect(entry.resources.find((r: { key: string }) => r.key === 'appsDeployment').data).toStartWith(
      'apiVersion: apps/v1\nkind: Deployment\n',
    )
  })
})

describe('HTTP repository index', () => {
  test('a second order revalidates index.yaml with its ETag (304) instead of downloading it again', async () => {
    const { t, alice } = await withSource()
    const before = repo.requests.length
    await order(t, alice, [pkg()])
    await order(t, alice, [pkg()])
    const seen = repo.requests.slice(before).filter((r) => r.includes('index.yaml'))
    expect(seen).toEqual(['GET /charts/index.yaml', 'GET /charts/index.yaml 304'])
  })
})
