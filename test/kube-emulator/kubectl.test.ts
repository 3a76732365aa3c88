import { afterEach, describe, expect, test } from 'bun:test'
import { eventually, stopAll, withKubectl } from './fixtures'

afterEach(stopAll)

const MANIFEST = `apiVersion: v1
kind: ConfigMap
metadata: {name: applied, namespace: demo}
data: {a: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: demo}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - {name: shop, image: "nginx:1.27", env: [{name: A, value: "1"}]}
`

describe('kubectl against the emulator over HTTPS', () => {
  test('kubectl get pods -A → the seeded pods as a server-side table', async () => {
    const { kubectl } = await withKubectl()
    const r = await kubectl.run(['get', 'pods', '-A'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/)
    expect(r.stdout).toMatch(/demo\s+web-\S+\s+2\/2\s+Running\s+0/)
  })

  test('kubectl describe deployment web → its replica set and the scaling event', async () => {
    const { kubectl } = await withKubectl()
    const r = await kubectl.run(['describe', 'deployment', 'web', '-n', 'demo'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('NewReplicaSet:')
    expect(r.stdout).toMatch(/ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-/)
  })

  test('kubectl apply twice → created, then configured with the change', async () => {
    const { kubectl } = await withKubectl()
    const first = await kubectl.run(['apply', '-f', '-'], MANIFEST)
    expect(first.stderr).toBe('')
    expect(first.stdout).toBe('configmap/applied created\ndeployment.apps/shop created\n')
    const second = await kubectl.run(['apply', '-f', '-'], MANIFEST.replace('a: "1"', 'a: "2"').replace('value: "1"', 'value: "2"'))
    expect(second.stdout).toBe('configmap/applied configured\ndeployment.apps/shop configured\n')
    expect((await kubectl.run(['get', 'cm', 'applied', '-n', 'demo', '-o', 'jsonpath={.data.a}'])).stdout).toBe('2')
    expect(
      (await kubectl.run(['get', 'deploy', 'shop', '-n', 'demo', '-o', 'jsonpath={.spec.template.spec.containers[0].env[0].value}']))
        .stdout,
    ).toBe('2')
  })

  test('kubectl apply --server-side → created, then configured', async () => {
    const { kubectl } = await withKubectl()
    const first = await kubectl.run(['apply', '--server-side', '-f', '-'], MANIFEST)
    expect(first.stderr).toBe('')
    expect(first.stdout).toBe('configmap/applied serverside-applied\ndeployment.apps/shop serverside-applied\n')
    await kubectl.run(['apply', '--server-side', '-f', '-'], MANIFEST.replace('a: "1"', 'a: "3"'))
    expect((await kubectl.run(['get', 'cm', 'applied', '-n', 'demo', '-o', 'jsonpath={.data.a}'])).stdout).toBe('3')
  })

  test('kubectl patch (strategic, merge, json) → each applied', async () => {
    const { kubectl } = await withKubectl()
    expect(
      (
        await kubectl.run([
          'patch',
          'deploy',
          'web',
          '-n',
          'demo',
          '-p',
          '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}',
        ])
      ).stdout,
    ).toBe('deployment.apps/web patched\n')
    expect(
      (await kubectl.run(['get', 'deploy', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.template.spec.containers[*].image}'])).stdout,
    ).toBe('nginx:2 busybox:latest')
    await kubectl.run(['patch', 'cm', 'cm1', '-n', 'demo', '--type=merge', '-p', '{"data":{"b":"x"}}'])
    await kubectl.run(['patch', 'cm', 'cm1', '-n', 'demo', '--type=json', '-p', '[{"op":"remove","path":"/data/greeting"}]'])
    expect((await kubectl.run(['get', 'cm', 'cm1', '-n', 'demo', '-o', 'jsonpath={.data}'])).stdout).toBe('{"b":"x"}')
  })

  test('kubectl scale deployment web --replicas=4 → four running pods', async () => {
    const { k, kubectl } = await withKubectl()
    expect((await kubectl.run(['scale', 'deployment', 'web', '-n', 'demo', '--replicas=4'])).stdout).toBe('deployment.apps/web scaled\n')
    await eventually(async () => (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')).body.items.length === 4)
  })

  test('kubectl delete deployment web → deleted, and its pods go away', async () => {
    const { k, kubectl } = await withKubectl()
    const r = await kubectl.run(['delete', 'deployment', 'web', '-n', 'demo'])
    expect(r.stdout).toBe('deployment.apps "web" deleted\n')
    await eventually(async () => (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')).body.items.length === 0)
  })

  test('kubectl logs -f → lines stream in until kubectl is stopped', async () => {
    const { kubectl } = await withKubectl()
    const p = kubectl.spawn(['logs', '-f', 'deployment/api', '-n', 'demo', '--tail=1'])
    const reader = (p.stdout as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (text.split('\n').length < 4) text += new TextDecoder().decode((await reader.read()).value)
    p.kill()
    expect(text).toContain('container=api')
  })

  test('kubectl exec echo → output; sh -c "exit 3" → kubectl exits 3', async () => {
    const { kubectl } = await withKubectl()
    const ok = await kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'echo', 'hello'])
    expect([ok.code, ok.stdout]).toEqual([0, 'hello\n'])
    const failed = await kubectl.run(['exec', '-n', 'demo', 'deploy/api', '--', 'sh', '-c', 'exit 3'])
    expect(failed.code).toBe(3)
    expect(failed.stderr).toContain('command terminated with exit code 3')
  })

  test('kubectl exec -i cat → stdin comes back on stdout', async () => {
    const { kubectl } = await withKubectl()
    const r = await kubectl.run(['exec', '-i', '-n', 'demo', 'deploy/api', '--', 'cat'], 'from stdin\n')
    expect([r.code, r.stdout]).toEqual([0, 'from stdin\n'])
  })

  test('kubectl top nodes and top pods → usage from metrics.k8s.io', async () => {
    const { kubectl } = await withKubectl()
    const nodes = await kubectl.run(['top', 'nodes'])
    expect(nodes.code).toBe(0)
    expect(nodes.stdout).toMatch(/node-1\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/)
    const pods = await kubectl.run(['top', 'pods', '-n', 'demo'])
    expect(pods.stdout).toMatch(/web-\S+\s+\d+m\s+\d+Mi/)
  })

  test('kubectl applies a CRD and a custom resource → served with its printer columns', async () => {
    const { kubectl } = await withKubectl()
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    additionalPrinterColumns: [{name: Size, type: integer, jsonPath: .spec.size}]
`
    expect((await kubectl.run(['apply', '-f', '-'], crd)).code).toBe(0)
    const cr = 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: demo}\nspec: {size: 3}\n'
    const applied = await kubectl.run(['apply', '-f', '-'], cr)
    expect(applied.stdout).toBe('widget.example.com/w1 created\n')
    expect((await kubectl.run(['apply', '-f', '-'], cr.replace('size: 3', 'size: 4'))).stdout).toBe('widget.example.com/w1 configured\n')
    expect((await kubectl.run(['get', 'wd', '-n', 'demo'])).stdout).toMatch(/^NAME\s+SIZE\nw1\s+4\n$/)
  })

  test('kubectl auth can-i → answers from SelfSubjectAccessReview', async () => {
    const { kubectl } = await withKubectl()
    const r = await kubectl.run(['auth', 'can-i', 'delete', 'pods', '-n', 'demo'])
    expect(r.stdout).toBe('yes\n')
  })

  test('kubectl auth whoami --as olga → the impersonated user; get pods as olga → Forbidden', async () => {
    const { kubectl } = await withKubectl()
    const who = await kubectl.run(['auth', 'whoami', '--as', 'olga', '-o', 'jsonpath={.status.userInfo.username}'])
    expect(who.stdout).toBe('olga')
    const denied = await kubectl.run(['get', 'pods', '-n', 'demo', '--as', 'olga'])
    expect(denied.code).toBe(1)
    expect(denied.stderr).toContain('pods is forbidden: User "olga" cannot list resource "pods" in API group "" in the namespace "demo"')
  })
})
