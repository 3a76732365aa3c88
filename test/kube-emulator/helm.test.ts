/** The real Helm (.tools/bin/helm) installs and uninstalls a `helm create` chart in the emulator over TLS. */
import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { helmIn } from '../support/helm'
import { eventually, stopAll, withKubectl } from './fixtures'

afterEach(stopAll)

describe('helm against the emulator', () => {
  test('helm test of a `helm create` chart → its test pod reaches the Service with wget and succeeds', async () => {
    const { kubectl } = await withKubectl()
    const helm = helmIn(kubectl.env)
    expect((await helm('create', 'shop')).code).toBe(0)
    expect((await helm('install', 'shop', './shop', '-n', 'demo', '--wait', '--timeout', '30s')).code).toBe(0)
    const tested = await helm('test', 'shop', '-n', 'demo', '--timeout', '20s')
    expect({ code: tested.code, stderr: tested.stderr }).toEqual({ code: 0, stderr: '' })
    expect(tested.stdout).toMatch(/TEST SUITE:\s+shop-test-connection\n[\s\S]*Phase:\s+Succeeded/)
  }, 60_000)

  test('helm install of a `helm create` chart with a pre-install hook Job → hook completed and deleted, deployed and running; upgrade without the HPA and 2 replicas → revision 2, HPA gone; helm uninstall → every object of the release gone', async () => {
    const { k, kubectl } = await withKubectl()
    const helm = helmIn(kubectl.env)
    expect((await helm('create', 'shop')).code).toBe(0)
    await Bun.write(
      join(kubectl.env.HOME!, 'shop/templates/migrate.yaml'),
      `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {"helm.sh/hook": pre-install, "helm.sh/hook-delete-policy": hook-succeeded}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: busybox, command: [sh, -c, "echo migrating"]}]
`,
    )
    const installed = await helm(
      'install',
      'shop',
      './shop',
      '-n',
      'demo',
      '--set',
      'autoscaling.enabled=true',
      '--set',
      'ingress.enabled=true',
      '--wait',
      '--timeout',
      '30s',
    )
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' })
    expect(installed.stdout).toContain('STATUS: deployed')
    const status = await helm('status', 'shop', '-n', 'demo')
    expect(status.stdout).toMatch(/STATUS: deployed\nREVISION: 1\n/)
    // The pre-install hook Job completed (Helm waited for it), then Helm deleted it as its policy says.
    const events = (await k.json('GET', '/api/v1/namespaces/demo/events?fieldSelector=involvedObject.name%3Dmigrate,reason%3DCompleted'))
      .body.items
    expect(events.map((e: any) => e.involvedObject.kind)).toEqual(['Job'])
    expect((await k.get('/apis/batch/v1/namespaces/demo/jobs/migrate')).status).toBe(404)

    const selector = 'app.kubernetes.io/instance=shop'
    const kinds = 'deployments,services,serviceaccounts,ingresses,horizontalpodautoscalers'
    const listed = await kubectl.run(['get', kinds, '-n', 'demo', '-l', selector, '-o', 'name'])
    expect(listed.stdout.trim().split('\n').sort()).toEqual([
      'deployment.apps/shop',
      'horizontalpodautoscaler.autoscaling/shop',
      'ingress.networking.k8s.io/shop',
      'service/shop',
      'serviceaccount/shop',
    ])
    const pods = (await k.json('GET', `/api/v1/namespaces/demo/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items
    expect(pods.map((p: any) => p.status.phase)).toEqual(['Running'])
    const upgraded = await helm(
      'upgrade',
      'shop',
      './shop',
      '-n',
      'demo',
      '--reuse-values',
      '--set',
      'autoscaling.enabled=false',
      '--set',
      'replicaCount=2',
      '--wait',
      '--timeout',
      '30s',
    )
    expect({ code: upgraded.code, stderr: upgraded.stderr }).toEqual({ code: 0, stderr: '' })
    expect((await helm('status', 'shop', '-n', 'demo')).stdout).toMatch(/STATUS: deployed\nREVISION: 2\n/)
    expect((await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/shop')).body.status.readyReplicas).toBe(2)
    expect((await k.get('/apis/autoscaling/v2/namespaces/demo/horizontalpodautoscalers/shop')).status).toBe(404)
    const uninstalled = await helm('uninstall', 'shop', '-n', 'demo', '--wait')
    expect({ code: uninstalled.code, stderr: uninstalled.stderr, stdout: uninstalled.stdout }).toEqual({
      code: 0,
      stderr: '',
      stdout: 'release "shop" uninstalled\n',
    })
    await eventually(async () => {
      const left = await kubectl.run([
        'get',
        `${kinds},replicasets,pods,endpoints,endpointslices`,
        '-n',
        'demo',
        '-l',
        selector,
        '-o',
        'name',
      ])
      return left.stdout === '' && left.code === 0
    })
    expect((await k.get('/api/v1/namespaces/demo/endpoints/shop')).status).toBe(404)
    expect((await k.json('GET', '/api/v1/namespaces/demo/secrets?labelSelector=owner%3Dhelm')).body.items).toEqual([])
    expect((await helm('status', 'shop', '-n', 'demo')).stderr).toContain('release: not found')
  }, 60_000)

  test('a protobuf body of a kind the emulator does not decode → 415 naming what it takes; a malformed one → 400', async () => {
    const { k } = await withKubectl()
    const typeMeta = [0x0a, 2, ...Buffer.from('v1'), 0x12, 3, ...Buffer.from('Pod')]
    const pod = new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x0a, typeMeta.length, ...typeMeta])
    const headers = { 'Content-Type': 'application/vnd.kubernetes.protobuf', Authorization: `Bearer ${k.emulator.token}` }
    const tls = { ca: k.emulator.caCertPem }
    const refused = await fetch(`${k.emulator.url}/api/v1/namespaces/demo/pods`, { method: 'POST', headers, body: pod, tls })
    expect(refused.status).toBe(415)
    expect((await refused.json()).message).toContain('application/vnd.kubernetes.protobuf (Secret, ConfigMap, DeleteOptions)')
    const garbage = await fetch(`${k.emulator.url}/api/v1/namespaces/demo/secrets`, {
      method: 'POST',
      headers,
      body: new Uint8Array([1, 2, 3, 4, 5]),
      tls,
    })
    expect(garbage.status).toBe(400)
  })
})
