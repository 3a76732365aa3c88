/** What kubectl users hit first (issue 11), each with the real kubectl against the emulator over TLS. */
import { afterEach, describe, expect, test } from 'bun:test'
import { eventually, stopAll, withKubectl } from './fixtures'

afterEach(stopAll)

const ok = (r: { code: number; stdout: string; stderr: string }) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
  return r.stdout
}

/** The revision annotation of deployment demo/shop, as kubectl reads it. */
const shopRevision = async (kubectl: Awaited<ReturnType<typeof withKubectl>>['kubectl']) =>
  ok(
    await kubectl.run([
      'get',
      'deploy',
      'shop',
      '-n',
      'demo',
      '-o',
      'jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}',
    ]),
  )

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - {name: shop, image: "nginx:1.27", ports: [{containerPort: 80}]}
`

describe('rollout', () => {
  test('kubectl rollout undo after set image → the first ReplicaSet is scaled back up, no third one, revision 3', async () => {
    const { k, kubectl } = await withKubectl()
    ok(await kubectl.run(['apply', '-f', '-'], DEPLOYMENT))
    ok(await kubectl.run(['rollout', 'status', 'deployment/shop', '-n', 'demo', '--timeout=20s']))
    expect(await shopRevision(kubectl)).toBe('1')
    ok(await kubectl.run(['set', 'image', 'deployment/shop', 'shop=nginx:1.28', '-n', 'demo']))
    ok(await kubectl.run(['rollout', 'status', 'deployment/shop', '-n', 'demo', '--timeout=20s']))
    const before = (await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dshop')).body.items
    const first = before.find((rs: any) => rs.spec.template.spec.containers[0].image === 'nginx:1.27')
    expect(ok(await kubectl.run(['rollout', 'undo', 'deployment/shop', '-n', 'demo']))).toBe('deployment.apps/shop rolled back\n')
    ok(await kubectl.run(['rollout', 'status', 'deployment/shop', '-n', 'demo', '--timeout=20s']))
    const after = await eventually(async () => {
      const items = (await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dshop')).body.items
      return items.find((rs: any) => rs.metadata.name === first.metadata.name && rs.spec.replicas === 2) ? items : undefined
    })
    expect(after.map((rs: any) => rs.metadata.name).sort()).toEqual(before.map((rs: any) => rs.metadata.name).sort())
    expect(
      after.find((rs: any) => rs.metadata.name === first.metadata.name).metadata.annotations['deployment.kubernetes.io/revision'],
    ).toBe('3')
    expect(await shopRevision(kubectl)).toBe('3')
  })

  test('kubectl rollout pause, then set image → no new ReplicaSet; rollout resume → the new one rolls out', async () => {
    const { k, kubectl } = await withKubectl()
    const sets = async () => (await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dapi')).body.items
    ok(await kubectl.run(['rollout', 'pause', 'deployment/api', '-n', 'demo']))
    ok(await kubectl.run(['set', 'image', 'deployment/api', 'api=ghcr.io/example/api:2.0.0', '-n', 'demo']))
    await k.emulator.settled()
    expect((await sets()).map((rs: any) => rs.spec.template.spec.containers[0].image)).toEqual(['ghcr.io/example/api:1.4.2'])
    ok(await kubectl.run(['rollout', 'resume', 'deployment/api', '-n', 'demo']))
    ok(await kubectl.run(['rollout', 'status', 'deployment/api', '-n', 'demo', '--timeout=20s']))
    const after = await eventually(async () => {
      const items = await sets()
      return items.length === 2 ? items : undefined
    })
    expect(after.map((rs: any) => [rs.spec.template.spec.containers[0].image, rs.spec.replicas]).sort()).toEqual([
      ['ghcr.io/example/api:1.4.2', 0],
      ['ghcr.io/example/api:2.0.0', 1],
    ])
  })

  test('kubectl rollout status statefulset/db → complete; after a new image it waits for the update, then reports the new revision', async () => {
    const { k, kubectl } = await withKubectl()
    expect(ok(await kubectl.run(['get', 'sts', 'db', '-n', 'demo', '-o', 'jsonpath={.spec.updateStrategy.type}']))).toBe('RollingUpdate')
    // The default partition 0 makes kubectl report a partitioned roll out, as against a real cluster.
    expect(ok(await kubectl.run(['rollout', 'status', 'statefulset/db', '-n', 'demo', '--timeout=20s']))).toBe(
      'partitioned roll out complete: 1 new pods have been updated...\n',
    )
    const first = (await k.json('GET', '/apis/apps/v1/namespaces/demo/statefulsets/db')).body.status
    expect(first.currentRevision).toMatch(/^db-\w+$/)
    ok(await kubectl.run(['set', 'image', 'statefulset/db', 'postgres=postgres:17.0', '-n', 'demo']))
    ok(await kubectl.run(['rollout', 'status', 'statefulset/db', '-n', 'demo', '--timeout=20s']))
    const { body } = await eventually(async () => {
      const sts = await k.json('GET', '/apis/apps/v1/namespaces/demo/statefulsets/db')
      return sts.body.status.updatedReplicas === 1 && sts.body.status.readyReplicas === 1 ? sts : undefined
    })
    expect(body.status.updateRevision).not.toBe(first.updateRevision)
    expect(body.status.currentRevision).toBe(body.status.updateRevision)
    const pod = (await k.json('GET', '/api/v1/namespaces/demo/pods/db-0')).body
    expect([pod.metadata.labels['controller-revision-hash'], pod.spec.containers[0].image]).toEqual([
      body.status.updateRevision,
      'postgres:17.0',
    ])
  })
})

describe('rollout history of stateful and daemon sets', () => {
  test('kubectl rollout history and undo statefulset/db → two revisions; undo restores the first image as revision 3', async () => {
    const { k, kubectl } = await withKubectl()
    ok(await kubectl.run(['set', 'image', 'statefulset/db', 'postgres=postgres:17.0', '-n', 'demo']))
    ok(await kubectl.run(['rollout', 'status', 'statefulset/db', '-n', 'demo', '--timeout=20s']))
    expect(ok(await kubectl.run(['rollout', 'history', 'statefulset/db', '-n', 'demo']))).toMatch(
      /^statefulset.apps\/db \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n\n$/,
    )
    expect(ok(await kubectl.run(['rollout', 'undo', 'statefulset/db', '-n', 'demo']))).toBe('statefulset.apps/db rolled back\n')
    await eventually(async () => {
      const pod = (await k.json('GET', '/api/v1/namespaces/demo/pods/db-0')).body
      return pod.spec?.containers[0].image === 'postgres:16.4' && pod.status.phase === 'Running'
    })
    expect(ok(await kubectl.run(['get', 'controllerrevisions', '-n', 'demo', '-l', 'app=db', '--sort-by=.revision']))).toMatch(
      /^NAME\s+CONTROLLER\s+REVISION\s+AGE\ndb-\w+\s+statefulset.apps\/db\s+2\s+\d+s\ndb-\w+\s+statefulset.apps\/db\s+3\s+\d+s\n$/,
    )
  })
})

describe('dry run', () => {
  test('kubectl scale/apply/delete/patch with --dry-run=server → answered, nothing persisted', async () => {
    const { k, kubectl } = await withKubectl()
    const before = (await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/web')).body
    expect(ok(await kubectl.run(['scale', 'deployment/web', '-n', 'demo', '--replicas=5', '--dry-run=server']))).toBe(
      'deployment.apps/web scaled (server dry run)\n',
    )
    ok(await kubectl.run(['patch', 'deployment/web', '-n', 'demo', '--dry-run=server', '-p', '{"spec":{"paused":true}}']))
    ok(await kubectl.run(['apply', '--dry-run=server', '-f', '-'], DEPLOYMENT))
    ok(await kubectl.run(['delete', 'configmap', 'cm1', '-n', 'demo', '--dry-run=server']))
    ok(await kubectl.run(['create', 'namespace', 'dry', '--dry-run=server']))
    const after = (await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/web')).body
    expect([after.spec.replicas, after.spec.paused, after.metadata.resourceVersion]).toEqual([
      2,
      undefined,
      before.metadata.resourceVersion,
    ])
    expect((await k.get('/apis/apps/v1/namespaces/demo/deployments/shop')).status).toBe(404)
    expect((await k.get('/api/v1/namespaces/demo/configmaps/cm1')).status).toBe(200)
    expect((await k.get('/api/v1/namespaces/dry')).status).toBe(404)
  })

  test('dryRun=All on the status and scale subresources → the would-be answer, nothing persisted; dryRun=Maybe → 400', async () => {
    const { k } = await withKubectl()
    const path = '/apis/apps/v1/namespaces/demo/deployments/web'
    const before = (await k.json('GET', path)).body
    const scale = await k.json('PUT', `${path}/scale?dryRun=All`, { spec: { replicas: 7 } })
    expect([scale.status, scale.body.spec.replicas]).toEqual([200, 7])
    const status = await k.json(
      'PATCH',
      `${path}/status?dryRun=All`,
      { status: { readyReplicas: 9 } },
      { 'Content-Type': 'application/merge-patch+json' },
    )
    expect([status.status, status.body.status.readyReplicas]).toEqual([200, 9])
    const after = (await k.json('GET', path)).body
    expect([after.spec.replicas, after.status.readyReplicas, after.metadata.resourceVersion]).toEqual([
      2,
      before.status.readyReplicas,
      before.metadata.resourceVersion,
    ])
    const bad = await k.json('PUT', `${path}/scale?dryRun=Maybe`, { spec: { replicas: 7 } })
    expect([bad.status, bad.body.message]).toEqual([400, 'dryRun: Unsupported value: "Maybe": supported values: "All"'])
  })
})

describe('apiserver defaults', () => {
  test('kubectl create secret with stringData → merged into data as base64, never returned', async () => {
    const { kubectl } = await withKubectl()
    ok(
      await kubectl.run(
        ['apply', '-f', '-'],
        'apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: demo}\ndata: {a: YQ==}\nstringData: {b: "bee"}\n',
      ),
    )
    const secret = JSON.parse(ok(await kubectl.run(['get', 'secret', 's1', '-n', 'demo', '-o', 'json'])))
    expect(secret.data).toEqual({ a: 'YQ==', b: Buffer.from('bee').toString('base64') })
    expect(secret).not.toHaveProperty('stringData')
    ok(await kubectl.run(['patch', 'secret', 's1', '-n', 'demo', '--type=merge', '-p', '{"stringData":{"a":"new"}}']))
    const patched = JSON.parse(ok(await kubectl.run(['get', 'secret', 's1', '-n', 'demo', '-o', 'json'])))
    expect([patched.data.a, patched.stringData]).toEqual([Buffer.from('new').toString('base64'), undefined])
  })

  test('container ports get protocol TCP; a namespace gets kubernetes.io/metadata.name; services default targetPort', async () => {
    const { kubectl } = await withKubectl()
    ok(await kubectl.run(['apply', '-f', '-'], DEPLOYMENT))
    expect(
      ok(
        await kubectl.run(['get', 'deploy', 'shop', '-n', 'demo', '-o', 'jsonpath={.spec.template.spec.containers[0].ports[0].protocol}']),
      ),
    ).toBe('TCP')
    ok(await kubectl.run(['create', 'namespace', 'team-a']))
    expect(ok(await kubectl.run(['get', 'ns', 'team-a', '-o', 'jsonpath={.metadata.labels}']))).toBe(
      '{"kubernetes.io/metadata.name":"team-a"}',
    )
    ok(await kubectl.run(['create', 'service', 'clusterip', 'shop', '-n', 'demo', '--tcp=8080']))
    expect(
      ok(await kubectl.run(['get', 'svc', 'shop', '-n', 'demo', '-o', 'jsonpath={.spec.ports[0].protocol} {.spec.ports[0].targetPort}'])),
    ).toBe('TCP 8080')
  })

  test('kubectl delete --cascade=orphan → the replica set stays without ownerReferences', async () => {
    const { k, kubectl } = await withKubectl()
    ok(await kubectl.run(['delete', 'deployment', 'web', '-n', 'demo', '--cascade=orphan']))
    await k.emulator.settled()
    const { body } = await k.json('GET', '/apis/apps/v1/namespaces/demo/replicasets?labelSelector=app%3Dweb')
    expect(body.items).toHaveLength(1)
    expect(body.items[0].metadata).not.toHaveProperty('ownerReferences')
  })
})

const POD = (name: string, spec: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: demo}
spec:
  containers: [{name: c, image: nginx}]
${spec}`

describe('scheduling', () => {
  test('a nodeSelector no node has → Pending with PodScheduled=False/Unschedulable and a FailedScheduling event in describe', async () => {
    const { kubectl } = await withKubectl()
    ok(await kubectl.run(['apply', '-f', '-'], POD('picky', '  nodeSelector: {disk: ssd}\n')))
    const described = await eventually(async () => {
      const out = ok(await kubectl.run(['describe', 'pod', 'picky', '-n', 'demo']))
      return out.includes('FailedScheduling') ? out : undefined
    })
    expect(described).toMatch(/Status:\s+Pending/)
    expect(described).toMatch(/PodScheduled\s+False/)
    expect(described).toContain("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
    expect(ok(await kubectl.run(['get', 'pod', 'picky', '-n', 'demo', '-o', 'jsonpath={.status.conditions[0].reason}']))).toBe(
      'Unschedulable',
    )
    // Labelling a node makes it fit: the pod is scheduled there and runs.
    ok(await kubectl.run(['label', 'node', 'node-2', 'disk=ssd']))
    await eventually(
      async () =>
        ok(await kubectl.run(['get', 'pod', 'picky', '-n', 'demo', '-o', 'jsonpath={.spec.nodeName} {.status.phase}'])) ===
        'node-2 Running',
    )
  })

  test('required node affinity → only a matching node; a taint without toleration → not there; with the toleration → allowed', async () => {
    const { kubectl } = await withKubectl()
    const affinity = `  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1]}]}]
`
    ok(await kubectl.run(['apply', '-f', '-'], POD('pinned', affinity)))
    await eventually(
      async () => ok(await kubectl.run(['get', 'pod', 'pinned', '-n', 'demo', '-o', 'jsonpath={.spec.nodeName}'])) === 'node-1',
    )
    ok(await kubectl.run(['taint', 'node', 'node-1', 'dedicated=db:NoSchedule']))
    ok(await kubectl.run(['apply', '-f', '-'], POD('blocked', affinity)))
    await eventually(async () =>
      ok(await kubectl.run(['get', 'pod', 'blocked', '-n', 'demo', '-o', 'jsonpath={.status.conditions[0].message}'])).includes(
        'untolerated taint {dedicated: db}',
      ),
    )
    ok(
      await kubectl.run(
        ['apply', '-f', '-'],
        POD('tolerant', `${affinity}  tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}]\n`),
      ),
    )
    await eventually(
      async () =>
        ok(await kubectl.run(['get', 'pod', 'tolerant', '-n', 'demo', '-o', 'jsonpath={.spec.nodeName} {.status.phase}'])) ===
        'node-1 Running',
    )
    expect(ok(await kubectl.run(['get', 'pod', 'blocked', '-n', 'demo', '-o', 'jsonpath={.status.phase}']))).toBe('Pending')
  })
})

describe('apply of a List and openapi', () => {
  test('kubectl get -o yaml of several objects, edited and applied back with apply -f → configured', async () => {
    const { kubectl } = await withKubectl()
    const listed = ok(await kubectl.run(['get', 'configmaps', 'cm1', 'cm2', '-n', 'demo', '-o', 'yaml']))
    expect(listed).toContain('kind: List')
    const r = await kubectl.run(['apply', '-f', '-'], listed.replace('greeting: hello', 'greeting: bonjour'))
    expect(
      r.stderr.replace(
        /Warning: resource configmaps\/cm[12] is missing the kubectl.kubernetes.io\/last-applied-configuration[^\n]*\n/g,
        '',
      ),
    ).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('configmap/cm1 configured\nconfigmap/cm2 configured\n')
    expect(ok(await kubectl.run(['get', 'cm', 'cm1', '-n', 'demo', '-o', 'jsonpath={.data.greeting}']))).toBe('bonjour')
  })

  test('GET /openapi/v2 as protobuf → a protobuf Document; as YAML only → 406 Status; as JSON → a Swagger 2.0 document', async () => {
    const { k } = await withKubectl()
    const proto = await k.request('GET', '/openapi/v2', {
      headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    })
    expect([proto.status, proto.headers.get('content-type')]).toEqual([200, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'])
    expect(new TextDecoder().decode(await proto.arrayBuffer())).toStartWith('\n\x032.0\x12')
    const yaml = await k.request('GET', '/openapi/v2', { headers: { Accept: 'application/yaml' } })
    expect([yaml.status, (await yaml.json()).reason]).toEqual([406, 'NotAcceptable'])
    const doc = await k.json('GET', '/openapi/v2', undefined, { Accept: 'application/json' })
    expect([doc.status, doc.body.swagger]).toEqual([200, '2.0'])
  })
})

describe('exec', () => {
  test('kubectl exec -- wget -O - web → the Service answers; an unknown host → exit 1 with bad address', async () => {
    const { kubectl } = await withKubectl()
    const reached = await kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'wget', '-q', '-O', '-', 'http://web'])
    expect([reached.code, reached.stdout]).toEqual([0, expect.stringContaining('web answered (emulated service)')])
    const other = await kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'curl', '-s', 'web.demo.svc.cluster.local:80'])
    expect(other.code).toBe(0)
    const missing = await kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'wget', 'nope:80'])
    expect([missing.code, missing.stderr]).toEqual([1, "wget: bad address 'nope:80'\ncommand terminated with exit code 1\n"])
  })

  // The race ("Unknown stream id 1 … closed all streams") needs output to beat kubectl's stream
  // setup, so the runs go four at a time to add scheduling pressure.
  test('kubectl exec -- env forty times, four at a time → every run exits 0 with the whole environment', async () => {
    const { kubectl } = await withKubectl()
    for (let round = 0; round < 10; round++) {
      const runs = await Promise.all([0, 1, 2, 3].map(() => kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'env'])))
      for (const r of runs) {
        expect({ round, code: r.code, stderr: r.stderr }).toEqual({ round, code: 0, stderr: '' })
        expect(r.stdout).toContain('LOG_LEVEL=info\n')
      }
    }
  }, 60_000)
})
