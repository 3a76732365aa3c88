import { afterAll, describe, expect, test } from 'bun:test'
import { SpecMessages } from '../../src/clusters/proxy/spec'
import { startEmulator } from '../../src/kube-emulator'
import { countingServer } from '../support/counting-server'
import { type ClusterLab, importAs, importBody, importedCluster } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

const P = '/api/v1/clusters/alice/dev/proxy'
const send = (l: ClusterLab, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  l.t.as(l.alice).send(method, `${P}${path}`, body, headers)
const unique = () => `cm-${crypto.randomUUID().slice(0, 8)}`

describe('proxy CRUD, generic over group/version/resource', () => {
  test('list a namespaced resource of the core group → 200 list with an ETag; If-None-Match → 304 without a body', async () => {
    const l = await importedCluster(member)
    const res = await send(l, 'GET', '/core/v1/namespaces/demo/pods')
    expect(res.status).toBe(200)
    const list = await res.json()
    expect(list.kind).toBe('PodList')
    const etag = res.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await send(l, 'GET', '/core/v1/namespaces/demo/pods', undefined, { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
  })

  test("an object's ETag is the same for the same bytes and changes with them: an old one → 200 with the new object", async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })
    const path = `/core/v1/namespaces/demo/configmaps/${name}`
    const first = (await send(l, 'GET', path)).headers.get('etag')!
    expect((await send(l, 'GET', path)).headers.get('etag')).toBe(first)
    expect((await send(l, 'GET', path, undefined, { 'if-none-match': `"x", W/${first}` })).status).toBe(304)
    await send(l, 'PATCH', path, { data: { a: '2' } }, { 'content-type': 'application/merge-patch+json' })
    const changed = await send(l, 'GET', path, undefined, { 'if-none-match': first })
    expect(changed.status).toBe(200)
    expect((await changed.json()).data).toEqual({ a: '2' })
    expect(changed.headers.get('etag')).not.toBe(first)
  })

  test('a cluster-scoped list and a named group (apps/v1)', async () => {
    const l = await importedCluster(member)
    expect((await (await send(l, 'GET', '/core/v1/namespaces')).json()).kind).toBe('NamespaceList')
    expect((await (await send(l, 'GET', '/apps/v1/namespaces/demo/deployments/web')).json()).metadata.name).toBe('web')
  })

  test("the spec's trailing slash is accepted", async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'GET', '/core/v1/namespaces/demo/configmaps/')).status).toBe(200)
  })

  test('create → 200 (not 201) with server fields; again → 409 AlreadyExists Status from the member', async () => {
    const l = await importedCluster(member)
    const name = unique()
    const created = await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })
    expect(created.status).toBe(200)
    expect((await created.json()).metadata.uid).toBeTruthy()
    const again = await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ kind: 'Status', reason: 'AlreadyExists' })
  })

  test('put replaces, delete removes', async () => {
    const l = await importedCluster(member)
    const name = unique()
    const created = await (await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })).json()
    const put = await send(l, 'PUT', `/core/v1/namespaces/demo/configmaps/${name}`, { ...created, data: { b: '2' } })
    expect((await put.json()).data).toEqual({ b: '2' })
    expect((await send(l, 'DELETE', `/core/v1/namespaces/demo/configmaps/${name}`)).status).toBe(200)
    expect((await send(l, 'GET', `/core/v1/namespaces/demo/configmaps/${name}`)).status).toBe(404)
  })

  test('a plain JSON PATCH is the desired object: a field left out is removed, server metadata kept', async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name, labels: { keep: 'x', drop: 'y' } }, data: { a: '1' } })
    const res = await send(
      l,
      'PATCH',
      `/core/v1/namespaces/demo/configmaps/${name}`,
      { metadata: { name, labels: { keep: 'x' } }, data: { a: '2' } },
      { 'content-type': 'application/json' },
    )
    expect(res.status).toBe(200)
    const patched = await res.json()
    expect(patched.metadata.labels).toEqual({ keep: 'x' })
    expect(patched.data).toEqual({ a: '2' })
    expect(patched.metadata.uid).toBeTruthy()
  })

  test('a merge patch passes through by its content type', async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })
    const res = await send(
      l,
      'PATCH',
      `/core/v1/namespaces/demo/configmaps/${name}`,
      { data: { b: '2' } },
      { 'content-type': 'application/merge-patch+json' },
    )
    expect((await res.json()).data).toEqual({ a: '1', b: '2' })
  })

  test("a JSON patch goes to the member as sent (30.6): its test and replace apply; a failing test is the member's 422", async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name }, data: { a: '1' } })
    const path = `/core/v1/namespaces/demo/configmaps/${name}`
    const type = { 'content-type': 'application/json-patch+json' }
    const applied = await send(
      l,
      'PATCH',
      path,
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'replace', path: '/data/a', value: '2' },
      ],
      type,
    )
    expect(applied.status).toBe(200)
    expect((await applied.json()).data).toEqual({ a: '2' })
    const stale = await send(l, 'PATCH', path, [{ op: 'test', path: '/data/a', value: '1' }], type)
    expect(stale.status).toBe(422)
    expect(await stale.json()).toMatchObject({ kind: 'Status', reason: 'Invalid' })
  })

  test('a strategic merge patch goes to the member as sent: one container of a Deployment changes, the others stay', async () => {
    const l = await importedCluster(member)
    const path = '/apps/v1/namespaces/demo/deployments/web'
    const before = await (await send(l, 'GET', path)).json()
    const [first, ...others] = before.spec.template.spec.containers as { name: string; image: string }[]
    const res = await send(
      l,
      'PATCH',
      path,
      { spec: { template: { spec: { containers: [{ name: first!.name, image: 'nginx:1.99' }] } } } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    )
    expect(res.status).toBe(200)
    const containers = (await res.json()).spec.template.spec.containers as { name: string; image: string }[]
    expect(containers.map((c) => [c.name, c.image])).toEqual([[first!.name, 'nginx:1.99'], ...others.map((c) => [c.name, c.image])])
  })

  test('a server-side apply (YAML) goes to the member as sent: the object is created from the YAML', async () => {
    const l = await importedCluster(member)
    const name = unique()
    const res = await send(
      l,
      'PATCH',
      `/core/v1/namespaces/demo/configmaps/${name}?fieldManager=tests`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: demo\ndata:\n  applied: "yes"\n`,
      { 'content-type': 'application/apply-patch+yaml' },
    )
    expect(res.status).toBe(201)
    expect((await res.json()).data).toEqual({ applied: 'yes' })
  })

  test('convertToTable=true answers a Table', async () => {
    const l = await importedCluster(member)
    const res = await send(l, 'GET', '/core/v1/namespaces/demo/pods?convertToTable=true')
    expect((await res.json()).kind).toBe('Table')
  })

  test('label selectors pass through', async () => {
    const l = await importedCluster(member)
    const pods = await (await send(l, 'GET', '/core/v1/namespaces/demo/pods?labelSelector=app%3Dweb')).json()
    expect(pods.items.length).toBeGreaterThan(0)
    expect(pods.items.every((p: { metadata: { labels: Record<string, string> } }) => p.metadata.labels.app === 'web')).toBe(true)
  })
})

describe('object views', () => {
  test('scale: GET the Scale; PUT {replicas} sets it; PUT without replicas → 422', async () => {
    const l = await importedCluster(member)
    const scale = await (await send(l, 'GET', '/apps/v1/namespaces/demo/deployments/api/scale')).json()
    expect(scale.kind).toBe('Scale')
    const put = await send(l, 'PUT', '/apps/v1/namespaces/demo/deployments/api/scale', { replicas: 2 })
    expect((await put.json()).spec.replicas).toBe(2)
    const bad = await send(l, 'PUT', '/apps/v1/namespaces/demo/deployments/api/scale', {})
    expect(bad.status).toBe(422)
    expect((await bad.json()).message).toBe(SpecMessages.replicasRequired)
    await send(l, 'PUT', '/apps/v1/namespaces/demo/deployments/api/scale', { replicas: 1 })
  })

  test('controller of a pod is its ReplicaSet; an object without one → 404', async () => {
    const l = await importedCluster(member)
    const pods = await (await send(l, 'GET', '/core/v1/namespaces/demo/pods?labelSelector=app%3Dweb')).json()
    const owner = await (await send(l, 'GET', `/core/v1/namespaces/demo/pods/${pods.items[0].metadata.name}/controller`)).json()
    expect(owner.kind).toBe('ReplicaSet')
    expect((await send(l, 'GET', '/apps/v1/namespaces/demo/deployments/web/controller')).status).toBe(404)
  })

  test('events of an object are the events naming its uid', async () => {
    const l = await importedCluster(member)
    const node = await (await send(l, 'GET', '/core/v1/nodes/node-1')).json()
    const events = await (await send(l, 'GET', '/core/v1/nodes/node-1/events')).json()
    expect(events.items.length).toBeGreaterThan(0)
    expect(events.items.every((e: { involvedObject: { uid: string } }) => e.involvedObject.uid === node.metadata.uid)).toBe(true)
  })

  test('horizontalpodautoscalers of a deployment are those targeting it', async () => {
    const l = await importedCluster(member)
    const hpa = (name: string, target: string) => ({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 1, maxReplicas: 3 },
    })
    const a = unique()
    const b = unique()
    await send(l, 'POST', '/autoscaling/v2/namespaces/demo/horizontalpodautoscalers', hpa(a, 'web'))
    await send(l, 'POST', '/autoscaling/v2/namespaces/demo/horizontalpodautoscalers', hpa(b, 'api'))
    const list = await (await send(l, 'GET', '/apps/v1/namespaces/demo/deployments/web/horizontalpodautoscalers')).json()
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain(a)
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).not.toContain(b)
  })

  test('pod logs and node and pod metrics', async () => {
    const l = await importedCluster(member)
    const pods = await (await send(l, 'GET', '/core/v1/namespaces/demo/pods?labelSelector=app%3Dapi')).json()
    const pod = pods.items[0].metadata.name
    const log = await send(l, 'GET', `/core/v1/namespaces/demo/pods/${pod}/log?tailLines=1`)
    expect(log.status).toBe(200)
    expect(log.headers.get('content-type')).toContain('text/plain')
    expect((await (await send(l, 'GET', '/core/v1/nodes/node-1/metrics')).json()).kind).toBe('NodeMetrics')
    expect((await (await send(l, 'GET', `/core/v1/namespaces/demo/pods/${pod}/metrics`)).json()).kind).toBe('PodMetrics')
    expect((await send(l, 'GET', '/core/v1/nodes/no-such-node/metrics')).status).toBe(404)
  })

  test('SelfSubjectAccessReview → 200 with a populated status', async () => {
    const l = await importedCluster(member)
    const res = await send(l, 'POST', '/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'demo', verb: 'list', resource: 'pods' } },
    })
    expect(res.status).toBe(200)
    expect((await res.json()).status.allowed).toBe(true)
  })

  test('batch-delete deletes each entry on its own and lists only the failures', async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name } })
    const res = await send(l, 'POST', '/batch-delete', {
      resources: [
        { namespace: 'demo', name, version: 'v1', resource: 'configmaps' },
        { namespace: 'demo', name: 'never-was', version: 'v1', resource: 'configmaps' },
      ],
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.resourcesStatus).toHaveLength(1)
    expect(body.resourcesStatus[0]).toMatchObject({ name: 'never-was', status: { reason: 'NotFound' } })
    expect((await send(l, 'GET', `/core/v1/namespaces/demo/configmaps/${name}`)).status).toBe(404)
  })

  test('batch-delete entries that are not objects of strings (null, a number, a text, a numeric name) → 200, each listed as a 422 failure; the good one deleted', async () => {
    const l = await importedCluster(member)
    const name = unique()
    await send(l, 'POST', '/core/v1/namespaces/demo/configmaps', { metadata: { name } })
    const res = await send(l, 'POST', '/batch-delete', {
      resources: [
        null,
        5,
        'x',
        { namespace: 'demo', name: 5, version: 'v1', resource: 'configmaps' },
        { namespace: 'demo', name, version: 'v1', resource: 'configmaps' },
      ],
    })
    expect(res.status).toBe(200)
    const failures = (await res.json()).resourcesStatus as { status: { code: number; message: string } }[]
    expect(failures).toHaveLength(4)
    for (const failure of failures) expect(failure.status).toMatchObject({ code: 422, message: expect.stringContaining('as strings') })
    expect((await send(l, 'GET', `/core/v1/namespaces/demo/configmaps/${name}`)).status).toBe(404)
  })

  test('batch-delete without resources → 422', async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'POST', '/batch-delete', {})).status).toBe(422)
  })
})

describe('proxy access', () => {
  test('another user → 404 on every path family', async () => {
    const l = await importedCluster(member)
    for (const path of ['/core/v1/namespaces', '/apps/v1/namespaces/demo/deployments/web/scale', '/batch-delete'])
      expect(
        (
          await l.t
            .as(l.bob)
            .send(path === '/batch-delete' ? 'POST' : 'GET', `${P}${path}`, path === '/batch-delete' ? { resources: [] } : undefined)
        ).status,
      ).toBe(404)
  })

  test('anonymous → 401', async () => {
    const l = await importedCluster(member)
    expect((await l.t.request('GET', `${P}/core/v1/namespaces`)).status).toBe(401)
  })

  test('a malformed proxy path → 422', async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'GET', '/core')).status).toBe(422)
  })
})

describe('render and report routes (rule 1), database configurations (rule 2), all-available, filter', () => {
  const q = (object: unknown) => encodeURIComponent(JSON.stringify(object))
  const renderMenu = { apiVersion: 'meta.k8s.appscode.com/v1alpha1', kind: 'RenderMenu', request: { menu: 'kubedb', mode: 'Accordion' } }

  test('a render GET with q → 200 with the filled object and an ETag; the same ETag → 304', async () => {
    const l = await importedCluster(member)
    const res = await send(l, 'GET', `/meta.k8s.appscode.com/v1alpha1/rendermenus?q=${q(renderMenu)}`)
    expect(res.status).toBe(200)
    expect((await res.json()).response).toBeDefined()
    const again = await send(l, 'GET', `/meta.k8s.appscode.com/v1alpha1/rendermenus?q=${q(renderMenu)}`, undefined, {
      'if-none-match': res.headers.get('etag')!,
    })
    expect(again.status).toBe(304)
  })

  test('q missing → 400 on renders, 500 on images and policy reports (as the spec says); q not JSON → 400', async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'GET', '/meta.k8s.appscode.com/v1alpha1/renders')).status).toBe(400)
    expect((await send(l, 'GET', '/reports.scanner.appscode.com/v1alpha1/images')).status).toBe(500)
    expect((await send(l, 'GET', '/policy.k8s.appscode.com/v1alpha1/policyreports')).status).toBe(500)
    const bad = await send(l, 'GET', '/meta.k8s.appscode.com/v1alpha1/renders?q=%7Bnot-json')
    expect(bad.status).toBe(400)
    expect((await bad.json()).message).toBe(SpecMessages.qInvalid)
  })

  test("an incomplete request object → the member's 400", async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'GET', `/meta.k8s.appscode.com/v1alpha1/rendermenus?q=${q({ kind: 'RenderMenu' })}`)).status).toBe(400)
  })

  test("a user menu's available entries pass through", async () => {
    const l = await importedCluster(member)
    expect((await send(l, 'GET', '/meta.k8s.appscode.com/v1alpha1/usermenus/kubedb/available')).status).toBe(200)
  })

  test('a DatabaseConfiguration: keys forwarded, resourceVersion cleared, ETag and Cache-Control set', async () => {
    const l = await importedCluster(member)
    const res = await send(l, 'GET', '/ui.kubedb.com/v1alpha1/namespaces/demo/databaseconfigurations/db?keys=postgresql.conf')
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toBeTruthy()
    expect(res.headers.get('cache-control')).toBe('private, no-cache')
    const body = await res.json()
    expect(body.request.keys).toEqual(['postgresql.conf'])
    expect(body.metadata.resourceVersion).toBeUndefined()
  })

  test('a DatabaseConfiguration the member refuses with 401 is reported as 403', async () => {
    const l = await importedCluster(member)
    const { registrationFixture } = await import('./support')
    await registrationFixture(l.t, l.alice.user, 'stale', {
      server: member.url,
      caData: member.caCertPem!,
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'revoked' },
    })
    const res = await l.t
      .as(l.alice)
      .get('/api/v1/clusters/alice/stale/proxy/ui.kubedb.com/v1alpha1/namespaces/demo/databaseconfigurations/db')
    expect(res.status).toBe(403)
  })

  test("all-available maps every listable kind of the group to its objects' names", async () => {
    const l = await importedCluster(member)
    const all = await (await send(l, 'GET', '/apps/v1/all-available')).json()
    expect(all.Deployment).toContain('web')
    expect(all.StatefulSet).toContain('db')
  })

  test("all-available of a group no member serves is the member's 404, whatever characters the group has", async () => {
    const l = await importedCluster(member)
    for (const group of ['%F0%9F%98%80', 'a%20b', 'x%3Fy']) expect((await send(l, 'GET', `/${group}/v1/all-available`)).status).toBe(404)
  })

  test('filter maps a list to the fields asked for', async () => {
    const l = await importedCluster(member)
    const filter = encodeURIComponent(
      JSON.stringify([{ $ref: '#/items' }, { name: { $ref: '#/metadata/name' }, node: { $ref: '#/spec/nodeName' } }]),
    )
    const res = await send(l, 'GET', `/core/v1/namespaces/demo/pods?labelSelector=app%3Dweb&filter=${filter}`)
    const rows = await res.json()
    expect(rows.length).toBeGreaterThan(0)
    expect(Object.keys(rows[0]).sort()).toEqual(['name', 'node'])
    expect((await send(l, 'GET', '/core/v1/namespaces/demo/pods?filter=%7Bnope')).status).toBe(400)
  })
})

describe('per-cluster impersonation', () => {
  test('a cluster registered with impersonate: the member sees the caller and the org group', async () => {
    const l = await importedCluster(member)
    const { makeOrg } = await import('../orgs/support')
    await makeOrg(l.t, 'acme', { owner: l.alice })
    await importAs(l.t, l.alice, 'acme', { ...importBody(member, 'shared'), impersonate: true })
    const res = await l.t.as(l.alice).send('POST', '/api/v1/clusters/acme/shared/proxy/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    })
    const review = await res.json()
    expect(review.status.userInfo.username).toBe('alice')
    expect(review.status.userInfo.groups).toContain('platform:org:acme')
  })
})

describe("impersonation names the caller's granted teams", () => {
  test("each group is its own Impersonate-Group: the member sees the org and the teams granted the cluster, not the caller's other teams", async () => {
    const l = await importedCluster(member)
    const { makeOrg } = await import('../orgs/support')
    await makeOrg(l.t, 'acme', { owner: l.alice, members: [l.bob] })
    expect((await importAs(l.t, l.alice, 'acme', { ...importBody(member, 'shared'), impersonate: true })).status).toBe(201)
    const team = (await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'ops', permission: 'write' })).json()) as {
      id: number
    }
    expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/members/bob`)).status).toBe(204)
    expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${team.id}/clusters/shared`)).status).toBe(204)
    const groupsOf = async (who: typeof l.alice) => {
      const res = await l.t.as(who).send('POST', '/api/v1/clusters/acme/shared/proxy/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      })
      expect(res.status).toBe(200)
      return (await res.json()).status.userInfo.groups
    }
    // bob is also in the org's Members team, which is not granted the cluster.
    expect(await groupsOf(l.bob)).toEqual(['platform:org:acme', 'platform:team:acme:ops', 'system:authenticated'])
    expect(await groupsOf(l.alice)).toEqual(['platform:org:acme', 'system:authenticated'])
  })
})

describe('a member that redirects', () => {
  test('a redirect is neither followed nor relayed: 502 naming the cluster, the target is never asked', async () => {
    const l = await importedCluster(member)
    const target = countingServer(() => new Response('{}'))
    const redirector = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) => Response.redirect(`${target.origin}${new URL(req.url).pathname}`, 307),
    })
    try {
      const { registrationFixture } = await import('./support')
      await registrationFixture(l.t, l.alice.user, 'moved', {
        server: `http://127.0.0.1:${redirector.port}`,
        caData: '',
        tlsServerName: '',
        insecureSkipTlsVerify: false,
        credential: { token: 'member-secret-token' },
      })
      // A plain relay, the passthrough, and a composite route's own calls to the member (events asks for the object first).
      for (const path of [
        '/api/v1/clusters/alice/moved/proxy/core/v1/namespaces',
        '/api/v1/clusters/alice/moved/k8s/api/v1/namespaces',
        '/api/v1/clusters/alice/moved/proxy/core/v1/namespaces/demo/pods/web/events',
      ]) {
        const res = await l.t.as(l.alice).get(path)
        expect(res.status).toBe(502)
        expect(res.headers.get('location')).toBeNull()
        expect((await res.json()).message).toContain('cluster "moved" answered with a redirect')
      }
      expect(target.hits()).toBe(0)
    } finally {
      target.stop()
      redirector.stop(true)
    }
  })
})
