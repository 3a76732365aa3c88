import { afterEach, describe, expect, test } from 'bun:test'
import { type Client, defineGizmos, emulator, eventually, stopAll } from './fixtures'

afterEach(stopAll)

const DEPLOY = '/apis/apps/v1/namespaces/demo/deployments'
const PODS = '/api/v1/namespaces/demo/pods'

async function podOf(k: Client, app: string): Promise<any> {
  const { body } = await k.json('GET', `${PODS}?labelSelector=app%3D${app}`)
  return body.items[0]
}

describe('status subresource', () => {
  test('an admin PUTs deployment status changing spec too → status changed, spec unchanged', async () => {
    const k = await emulator()
    const { body: d } = await k.json('GET', `${DEPLOY}/web`)
    const { status, body } = await k.json('PUT', `${DEPLOY}/web/status`, {
      ...d,
      spec: { ...d.spec, replicas: 9 },
      status: { ...d.status, readyReplicas: 7 },
    })
    expect(status).toBe(200)
    expect(body.status.readyReplicas).toBe(7)
    expect(body.spec.replicas).toBe(2)
  })

  test('an admin PUTs the main resource with a new status → status ignored', async () => {
    const k = await emulator()
    const { body: d } = await k.json('GET', `${DEPLOY}/web`)
    const { body } = await k.json('PUT', `${DEPLOY}/web`, { ...d, status: { readyReplicas: 99 } })
    expect(body.status.readyReplicas).toBe(2)
  })
})

describe('scale subresource', () => {
  test('an admin GETs deployment scale → autoscaling/v1 Scale with the selector string', async () => {
    const k = await emulator()
    const { status, body } = await k.json('GET', `${DEPLOY}/web/scale`)
    expect(status).toBe(200)
    expect(body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'web', namespace: 'demo' },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=web' },
    })
  })

  test('an admin PUTs scale 3 → the deployment has 3 replicas, a new RV, and three pods appear', async () => {
    const k = await emulator()
    const { body: before } = await k.json('GET', `${DEPLOY}/web`)
    const { status, body } = await k.json('PUT', `${DEPLOY}/web/scale`, { spec: { replicas: 3 } })
    expect(status).toBe(200)
    expect(body.spec.replicas).toBe(3)
    const { body: after } = await k.json('GET', `${DEPLOY}/web`)
    expect(after.spec.replicas).toBe(3)
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion))
    await eventually(async () => (await k.json('GET', `${PODS}?labelSelector=app%3Dweb`)).body.items.length === 3)
  })

  test('an admin PUTs scale with a stale resourceVersion → 409; with -1 replicas → 422', async () => {
    const k = await emulator()
    const { body: scale } = await k.json('GET', `${DEPLOY}/web/scale`)
    await k.json('PUT', `${DEPLOY}/web/scale`, { spec: { replicas: 4 } })
    expect((await k.json('PUT', `${DEPLOY}/web/scale`, { ...scale, spec: { replicas: 5 } })).status).toBe(409)
    const bad = await k.json('PUT', `${DEPLOY}/web/scale`, { spec: { replicas: -1 } })
    expect(bad.status).toBe(422)
    expect(bad.body.message).toContain('Scale.autoscaling "web" is invalid: spec.replicas')
  })

  test('an admin merge-patches scale → replicas follow', async () => {
    const k = await emulator()
    const { body } = await k.json(
      'PATCH',
      `${DEPLOY}/web/scale`,
      { spec: { replicas: 1 } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    expect(body.spec.replicas).toBe(1)
  })

  test('an admin asks for the scale of a configmap → 404', async () => {
    const k = await emulator()
    expect((await k.get('/api/v1/namespaces/demo/configmaps/cm1/scale')).status).toBe(404)
  })
})

describe('controllers and owner references', () => {
  test('a pod of web has a controller ReplicaSet, whose controller is Deployment web, which has none', async () => {
    const k = await emulator()
    const pod = await podOf(k, 'web')
    const podOwner = pod.metadata.ownerReferences.find((o: any) => o.controller)
    expect(podOwner).toMatchObject({ apiVersion: 'apps/v1', kind: 'ReplicaSet', controller: true })
    const { body: rs } = await k.json('GET', `/apis/apps/v1/namespaces/demo/replicasets/${podOwner.name}`)
    expect(rs.metadata.uid).toBe(podOwner.uid)
    const rsOwner = rs.metadata.ownerReferences.find((o: any) => o.controller)
    expect(rsOwner).toMatchObject({ kind: 'Deployment', name: 'web' })
    const { body: d } = await k.json('GET', `${DEPLOY}/web`)
    expect(d.metadata.uid).toBe(rsOwner.uid)
    expect(d.metadata.ownerReferences).toBeUndefined()
  })

  test('an admin creates a deployment → a ReplicaSet, running pods on nodes, ready status and events', async () => {
    const k = await emulator()
    await k.json('POST', DEPLOY, {
      metadata: { name: 'shop' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'shop' } },
        template: { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'shop', image: 'nginx' }] } },
      },
    })
    const d = await eventually(async () => {
      const { body } = await k.json('GET', `${DEPLOY}/shop`)
      return body.status?.readyReplicas === 2 && body
    })
    expect(d.status).toMatchObject({ replicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1 })
    const { body: pods } = await k.json('GET', `${PODS}?labelSelector=app%3Dshop`)
    expect(pods.items.map((p: any) => p.status.phase)).toEqual(['Running', 'Running'])
    expect(pods.items.every((p: any) => p.spec.nodeName && p.status.podIP)).toBe(true)
    const { body: events } = await k.json(
      'GET',
      `/api/v1/namespaces/demo/events?fieldSelector=involvedObject.uid%3D${pods.items[0].metadata.uid}`,
    )
    expect(events.items.map((e: any) => e.reason)).toContain('Scheduled')
  })

  test('an admin deletes a deployment → its replica sets and pods are garbage collected', async () => {
    const k = await emulator()
    await k.json('DELETE', `${DEPLOY}/web`)
    await eventually(async () => (await k.json('GET', `${PODS}?labelSelector=app%3Dweb`)).body.items.length === 0)
    expect((await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dweb')).body.items).toEqual([])
  })

  test('an admin deletes a deployment with propagationPolicy Orphan → its replica set stays, without ownerReferences', async () => {
    const k = await emulator()
    await k.json('DELETE', `${DEPLOY}/web`, { propagationPolicy: 'Orphan' })
    await k.emulator.settled()
    const { body } = await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dweb')
    expect(body.items).toHaveLength(1)
    expect(body.items[0].metadata).not.toHaveProperty('ownerReferences')
  })

  test('an admin deletes a pod of web → the replica set replaces it', async () => {
    const k = await emulator()
    const pod = await podOf(k, 'web')
    await k.json('DELETE', `${PODS}/${pod.metadata.name}`)
    await eventually(async () => {
      const { body } = await k.json('GET', `${PODS}?labelSelector=app%3Dweb`)
      return body.items.length === 2 && body.items.every((p: any) => p.metadata.name !== pod.metadata.name && p.status.phase === 'Running')
    })
  })

  test('an admin sets two controller owner references → 422', async () => {
    const k = await emulator()
    const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid, controller: true })
    const { status } = await k.json('POST', '/api/v1/namespaces/demo/configmaps', {
      metadata: { name: 'two', ownerReferences: [ref('a'), ref('b')] },
    })
    expect(status).toBe(422)
  })

  test('an admin creates a namespace → it gets a default service account; deleting it removes its objects', async () => {
    const k = await emulator()
    await k.json('POST', '/api/v1/namespaces', { metadata: { name: 'scratch' } })
    await eventually(async () => (await k.get('/api/v1/namespaces/scratch/serviceaccounts/default')).status === 200)
    await k.json('POST', '/api/v1/namespaces/scratch/configmaps', { metadata: { name: 'c' } })
    await k.json('DELETE', '/api/v1/namespaces/scratch')
    await eventually(
      async () => (await k.json('GET', '/api/v1/configmaps?fieldSelector=metadata.namespace%3Dscratch')).body.items.length === 0,
    )
  })
})

describe('pod logs', () => {
  test('an admin reads logs of a two-container pod without container → 400 naming the choices', async () => {
    const k = await emulator()
    const pod = await podOf(k, 'web')
    const { status, body } = await k.json('GET', `${PODS}/${pod.metadata.name}/log`)
    expect(status).toBe(400)
    expect(body.message).toBe(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [app side]`)
  })

  test('an admin reads tailLines=2 with timestamps → text/plain, two lines starting with RFC3339 timestamps', async () => {
    const k = await emulator({ logIntervalMs: 50 })
    const pod = await podOf(k, 'api')
    const res = await k.get(`${PODS}/${pod.metadata.name}/log?tailLines=2&timestamps=true`)
    expect(res.headers.get('content-type')).toStartWith('text/plain')
    const lines = (await res.text()).trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z level=/)
  })

  test('an admin follows logs → lines keep arriving before the stream ends', async () => {
    const k = await emulator({ logIntervalMs: 50 })
    const pod = await podOf(k, 'api')
    const controller = new AbortController()
    const res = await fetch(`${k.emulator.url}${PODS}/${pod.metadata.name}/log?follow=true&tailLines=0`, {
      headers: { Authorization: `Bearer ${k.emulator.token}` },
      signal: controller.signal,
    })
    const reader = res.body!.getReader()
    let text = ''
    while (text.split('\n').length < 4) text += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    expect(text).toContain('container=api')
  })

  test('an admin follows logs with limitBytes=10 → exactly ten bytes, then the stream ends', async () => {
    const k = await emulator({ logIntervalMs: 50 })
    const pod = await podOf(k, 'api')
    const text = await (await k.get(`${PODS}/${pod.metadata.name}/log?follow=true&limitBytes=10`)).text()
    expect(text).toBe('level=info')
  })

  test('an admin asks for sinceSeconds=1 on a pod that logged for longer → only recent lines', async () => {
    let offsetMs = 0
    const k = await emulator({ logIntervalMs: 100, clock: () => Date.now() + offsetMs })
    const pod = await podOf(k, 'api')
    offsetMs += 1500
    const all = (await (await k.get(`${PODS}/${pod.metadata.name}/log`)).text()).trimEnd().split('\n')
    const recent = (await (await k.get(`${PODS}/${pod.metadata.name}/log?sinceSeconds=1`)).text()).trimEnd().split('\n')
    expect(recent.length).toBeLessThan(all.length)
    expect(recent.length).toBeGreaterThanOrEqual(8)
  })

  test('an admin asks logs of a missing pod → 404; of an unknown container → 400; bad tailLines → 422', async () => {
    const k = await emulator()
    const pod = await podOf(k, 'api')
    expect((await k.get(`${PODS}/nope/log`)).status).toBe(404)
    const bad = await k.json('GET', `${PODS}/${pod.metadata.name}/log?container=zz`)
    expect([bad.status, bad.body.message]).toEqual([400, `container zz is not valid for pod ${pod.metadata.name}`])
    expect((await k.get(`${PODS}/${pod.metadata.name}/log?tailLines=-1`)).status).toBe(422)
  })
})

describe('metrics.k8s.io', () => {
  test('an admin reads node metrics → NodeMetrics with cpu and memory usage; a missing node → 404', async () => {
    const k = await emulator()
    const { status, body } = await k.json('GET', '/apis/metrics.k8s.io/v1beta1/nodes/node-1')
    expect(status).toBe(200)
    expect(body).toMatchObject({ kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'node-1' } })
    expect(body.usage.cpu).toMatch(/^\d+n$/)
    expect(body.usage.memory).toMatch(/^\d+Ki$/)
    expect(body.timestamp).toBeString()
    const missing = await k.json('GET', '/apis/metrics.k8s.io/v1beta1/nodes/zz')
    expect([missing.status, missing.body.message]).toEqual([404, 'nodemetrics.metrics.k8s.io "zz" not found'])
  })

  test('an admin reads pod metrics → PodMetrics with per-container usage; the list honours labels', async () => {
    const k = await emulator()
    const pod = await podOf(k, 'web')
    const { body } = await k.json('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods/${pod.metadata.name}`)
    expect(body.kind).toBe('PodMetrics')
    expect(body.containers.map((c: any) => c.name)).toEqual(['app', 'side'])
    const { body: list } = await k.json('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods?labelSelector=app%3Dweb')
    expect(list.kind).toBe('PodMetricsList')
    expect(list.items).toHaveLength(2)
  })
})

describe('SelfSubjectAccessReview', () => {
  const review = (namespace: string, verb = 'list') => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace, verb, resource: 'pods' } },
  })

  test('a user limited to demo reviews list pods in demo → allowed; in kube-system → not allowed with no reason (as RBAC answers), still 201', async () => {
    const k = await emulator({ users: { t: { name: 'dev', namespaces: ['demo'] } } })
    const ask = async (ns: string) => {
      const res = await k.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: review(ns), token: 't' })
      return { status: res.status, body: await res.json() }
    }
    const demo = await ask('demo')
    expect([demo.status, demo.body.status.allowed]).toEqual([201, true])
    const system = await ask('kube-system')
    expect([system.status, system.body.status]).toEqual([201, { allowed: false }])
  })

  test('a read-only user reviews delete → not allowed; the admin → allowed', async () => {
    const k = await emulator({ users: { r: { name: 'viewer', verbs: ['get', 'list'] } } })
    const res = await k.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: review('demo', 'delete'),
      token: 'r',
    })
    expect((await res.json()).status.allowed).toBe(false)
    expect(
      (await k.json('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review('demo', 'delete'))).body.status.allowed,
    ).toBe(true)
  })

  test('a review without attributes → 422', async () => {
    const k = await emulator()
    expect((await k.json('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: {} })).status).toBe(422)
  })
})

describe('Table output', () => {
  const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json' }

  test('an admin lists deployments as a Table → kubectl columns and PartialObjectMetadata rows', async () => {
    const k = await emulator()
    const res = await k.request('GET', DEPLOY, { headers: TABLE })
    const body = await res.json()
    expect(body).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' })
    expect(body.columnDefinitions.map((c: any) => c.name)).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ])
    for (const c of body.columnDefinitions) expect(Object.keys(c).sort()).toEqual(['description', 'format', 'name', 'priority', 'type'])
    const web = body.rows.find((r: any) => r.cells[0] === 'web')
    expect(web.cells.slice(1, 4)).toEqual(['2/2', 2, 2])
    expect(web.object.kind).toBe('PartialObjectMetadata')
  })

  test('an admin gets pods and nodes as Tables → Ready/Status/Restarts and Status/Roles/Version', async () => {
    const k = await emulator()
    const pods = await (await k.request('GET', PODS, { headers: TABLE })).json()
    expect(pods.columnDefinitions.slice(0, 5).map((c: any) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age'])
    expect(pods.rows.find((r: any) => r.cells[0].startsWith('web-')).cells.slice(1, 4)).toEqual(['2/2', 'Running', 0])
    const node = await (await k.request('GET', '/api/v1/nodes/node-1', { headers: TABLE })).json()
    expect(node.rows).toHaveLength(1)
    expect(node.rows[0].cells.slice(0, 3)).toEqual(['node-1', 'Ready', 'control-plane'])
  })

  test('an admin lists configmaps as a Table → Name, Data, Age; includeObject=None omits objects', async () => {
    const k = await emulator()
    const body = await (await k.request('GET', '/api/v1/namespaces/demo/configmaps?includeObject=None', { headers: TABLE })).json()
    expect(body.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Data', 'Age'])
    expect(body.rows.find((r: any) => r.cells[0] === 'cm1').cells[1]).toBe(1)
    expect(body.rows[0].object).toBeUndefined()
  })

  test('an admin lists custom resources of a CRD without printer columns as a Table → Name and Age', async () => {
    const k = await emulator()
    await defineGizmos(k)
    await k.json('POST', '/apis/toys.io/v1/namespaces/demo/gizmos', { metadata: { name: 'g1' } })
    const body = await (await k.request('GET', '/apis/toys.io/v1/namespaces/demo/gizmos', { headers: TABLE })).json()
    expect(body.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Age'])
    expect(body.rows[0].cells[0]).toBe('g1')
  })

  test('an admin lists HPAs as a Table → the kubectl columns with the scale target', async () => {
    const k = await emulator()
    const body = await (await k.request('GET', '/apis/autoscaling/v2/namespaces/demo/horizontalpodautoscalers', { headers: TABLE })).json()
    expect(body.columnDefinitions.map((c: any) => c.name)).toEqual([
      'Name',
      'Reference',
      'Targets',
      'MinPods',
      'MaxPods',
      'Replicas',
      'Age',
    ])
    expect(body.rows[0].cells.slice(0, 2)).toEqual(['web', 'Deployment/web'])
  })
})

describe('discovery', () => {
  test("an admin reads /api, /apis and /version → kubectl's discovery documents", async () => {
    const k = await emulator()
    expect((await k.json('GET', '/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] })
    const { body: groups } = await k.json('GET', '/apis')
    const names = groups.groups.map((g: any) => g.name)
    for (const g of [
      'apps',
      'autoscaling',
      'apiextensions.k8s.io',
      'authorization.k8s.io',
      'metrics.k8s.io',
      'meta.k8s.appscode.com',
      'ui.kubedb.com',
    ])
      expect(names).toContain(g)
    expect(groups.groups.find((g: any) => g.name === 'autoscaling').preferredVersion.version).toBe('v2')
    expect((await k.json('GET', '/version')).body).toMatchObject({ major: '1', minor: '31' })
  })

  test('an admin reads /api/v1 → pods with verbs, short names and the exec, log and status subresources', async () => {
    const k = await emulator()
    const { body } = await k.json('GET', '/api/v1')
    const byName = Object.fromEntries(body.resources.map((r: any) => [r.name, r]))
    expect(byName.pods).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'], singularName: 'pod' })
    expect(byName.pods.verbs).toContain('watch')
    for (const sub of ['pods/exec', 'pods/log', 'pods/status']) expect(byName[sub]).toBeDefined()
    expect(byName.nodes.namespaced).toBe(false)
  })

  test('an admin creates a CRD → its group appears in discovery and its objects are served; deleting it removes both', async () => {
    const k = await emulator()
    const crd = {
      metadata: { name: 'gadgets.toys.io' },
      spec: {
        group: 'toys.io',
        scope: 'Cluster',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true }],
      },
    }
    expect((await k.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201)
    expect((await k.json('GET', '/apis/toys.io/v1')).body.resources[0]).toMatchObject({
      name: 'gadgets',
      kind: 'Gadget',
      namespaced: false,
    })
    const { status, body } = await k.json('POST', '/apis/toys.io/v1/gadgets', {
      apiVersion: 'toys.io/v1',
      kind: 'Gadget',
      metadata: { name: 'g1' },
      spec: { x: 1 },
    })
    expect([status, body.kind, body.spec]).toEqual([201, 'Gadget', { x: 1 }])
    await eventually(async () =>
      (await k.json('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.toys.io')).body.status?.conditions?.some(
        (c: any) => c.type === 'Established',
      ),
    )
    await k.json('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.toys.io')
    expect((await k.get('/apis/toys.io/v1/gadgets')).status).toBe(404)
  })

  test('an admin reads /openapi/v3 → an index whose documents declare fieldValidation on PATCH', async () => {
    const k = await emulator()
    const { body } = await k.json('GET', '/openapi/v3')
    const url = body.paths['apis/apps/v1'].serverRelativeURL
    const { body: doc } = await k.json('GET', url)
    const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' })
    expect(patch.parameters.map((p: any) => p.name)).toContain('fieldValidation')
  })
})
