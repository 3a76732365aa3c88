import { afterEach, describe, expect, test } from 'bun:test'
import { emulator, stopAll } from './fixtures'

afterEach(stopAll)

const META = '/apis/meta.k8s.appscode.com/v1alpha1'
const webSource = { resource: { group: 'apps', version: 'v1', name: 'deployments' }, ref: { namespace: 'demo', name: 'web' } }

describe('meta.k8s.appscode.com', () => {
  test('a Render of deployment web → 201 with the request echoed and a view whose block succeeded', async () => {
    const k = await emulator()
    const body = {
      apiVersion: 'meta.k8s.appscode.com/v1alpha1',
      kind: 'Render',
      request: { source: webSource, pageName: 'Overview', convertToTable: true },
    }
    const { status, body: res } = await k.json('POST', `${META}/renders`, body)
    expect(status).toBe(201)
    expect(res).toMatchObject({ kind: 'Render', request: body.request })
    const block = res.response.view.pages[0].sections[0].blocks[0]
    expect(block.result.status).toBe('Success')
    expect(block.table.rows[0].cells.map((c: any) => c.data)).toEqual(['Name', 'web'])
  })

  test('a Render without request → 400 missing apirequest', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', `${META}/renders`, { apiVersion: 'meta.k8s.appscode.com/v1alpha1', kind: 'Render' })
    expect(status).toBe(400)
    expect(body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'missing apirequest' })
  })

  test('a RenderMenu → a Menu with sections; without mode → 400', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', `${META}/rendermenus`, {
      apiVersion: 'meta.k8s.appscode.com/v1alpha1',
      kind: 'RenderMenu',
      request: { menu: 'cluster', mode: 'Accordion' },
    })
    expect(status).toBe(201)
    expect(body.response).toMatchObject({ kind: 'Menu', metadata: { name: 'cluster' }, spec: { mode: 'Accordion' } })
    expect(body.response.spec.sections.map((s: any) => s.name)).toContain('Workloads')
    expect((await k.json('POST', `${META}/rendermenus`, { request: { menu: 'cluster' } })).status).toBe(400)
  })

  test('a ResourceGraph of deployment web → connections whose resourceIDs index resources', async () => {
    const k = await emulator()
    const { body } = await k.json('POST', `${META}/resourcegraphs`, { request: { source: webSource } })
    const { resources, connections } = body.response
    expect(resources.map((r: any) => r.kind).sort()).toEqual(['Deployment', 'Pod', 'ReplicaSet'])
    expect(connections).toHaveLength(3)
    for (const c of connections) expect(resources[c.target.resourceID]).toBeDefined()
  })

  test('a RenderDashboard → Grafana links for the source', async () => {
    const k = await emulator()
    const { body } = await k.json('POST', `${META}/renderdashboards`, { request: { sourceLocator: webSource } })
    expect(body.response.dashboards[0].title).toBe('Deployment web')
    expect(body.response.dashboards[0].panels.length).toBeGreaterThan(0)
  })

  test('usermenus/cluster/available and vendormenus → a Menu', async () => {
    const k = await emulator()
    for (const res of ['usermenus', 'vendormenus']) {
      const { status, body } = await k.json('GET', `${META}/${res}/cluster/available`)
      expect([status, body.kind]).toEqual([200, 'Menu'])
    }
  })
})

describe('reports.scanner.appscode.com and policy.k8s.appscode.com', () => {
  test('Images of deployment web → its two images, sorted, with pod lineage', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', '/apis/reports.scanner.appscode.com/v1alpha1/images', {
      request: { resource: { group: 'apps', kind: 'Deployment', name: 'deployments' }, ref: { namespace: 'demo', name: 'web' } },
    })
    expect(status).toBe(201)
    expect(body.response.images.map((i: any) => i.image)).toEqual(['busybox:latest', 'nginx:1.27'])
    expect(body.response.images[0].lineages[0].chain[0].resource.kind).toBe('Pod')
  })

  test('a CVEReport of the cluster → stats keyed by severity and cves with ids', async () => {
    const k = await emulator()
    const { body } = await k.json('POST', '/apis/reports.scanner.appscode.com/v1alpha1/cvereports', { request: {} })
    expect(Object.keys(body.response.vulnerabilities.stats).sort()).toEqual(['CRITICAL', 'HIGH', 'LOW', 'MEDIUM', 'UNKNOWN'])
    for (const c of body.response.vulnerabilities.cves) expect(c.vulnerabilityID).toStartWith('CVE-')
  })

  test('a PolicyReport of namespace demo → constraints sorted by name, each with violations', async () => {
    const k = await emulator()
    const { body } = await k.json('POST', '/apis/policy.k8s.appscode.com/v1alpha1/policyreports', {
      request: { resource: { group: '', kind: 'Namespace' }, ref: { name: 'demo' } },
    })
    const names = body.response.constraints.map((c: any) => c.name)
    expect(names).toEqual([...names].sort())
    expect(names).toContain('disallow-latest-tag')
    for (const c of body.response.constraints) expect(c.violations.length).toBeGreaterThan(0)
  })

  test('a scanner report with no body → 400', async () => {
    const k = await emulator()
    expect((await k.request('POST', '/apis/reports.scanner.appscode.com/v1alpha1/images')).status).toBe(400)
  })
})

describe('ui.kubedb.com', () => {
  test('GET databaseconfigurations/pg?keys=… → configuration files narrowed to the keys', async () => {
    const k = await emulator()
    const { status, body } = await k.json(
      'GET',
      '/apis/ui.kubedb.com/v1alpha1/namespaces/demo/databaseconfigurations/pg?keys=postgresql.conf',
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({ kind: 'DatabaseConfiguration', request: { keys: ['postgresql.conf'] } })
    expect(Object.keys(body.response.configurations[0].data)).toEqual(['postgresql.conf'])
  })

  test('a DatabaseConfiguration create without request → 400 missing apirequest', async () => {
    const k = await emulator()
    const { status, body } = await k.json('POST', '/apis/ui.kubedb.com/v1alpha1/databaseconfigurations', { kind: 'DatabaseConfiguration' })
    expect([status, body.message]).toEqual([400, 'missing apirequest'])
  })

  test('a token limited to another namespace reads the configuration → 403', async () => {
    const k = await emulator({ users: { t: { name: 'dev', namespaces: ['other'] } } })
    const res = await k.request('GET', '/apis/ui.kubedb.com/v1alpha1/namespaces/demo/databaseconfigurations/pg', { token: 't' })
    expect(res.status).toBe(403)
  })
})

describe('ownership cycles', () => {
  test('two configmaps owning each other → a ResourceGraph still answers', async () => {
    const k = await emulator()
    const { body: a } = await k.json('POST', '/api/v1/namespaces/demo/configmaps', { metadata: { name: 'a' } })
    const { body: b } = await k.json('POST', '/api/v1/namespaces/demo/configmaps', {
      metadata: { name: 'b', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: a.metadata.uid }] },
    })
    await k.json(
      'PATCH',
      '/api/v1/namespaces/demo/configmaps/a',
      { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: b.metadata.uid }] } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    const { status, body } = await k.json('POST', `${META}/resourcegraphs`, {
      request: { source: { resource: { group: '', version: 'v1', name: 'configmaps' }, ref: { namespace: 'demo', name: 'a' } } },
    })
    expect(status).toBe(201)
    expect(body.response.connections).toHaveLength(1)
  })
})
