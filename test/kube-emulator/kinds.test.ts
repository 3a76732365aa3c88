/** The kinds Helm charts install, through the real kubectl over TLS: stored, listed with kubectl's columns, watched, and their controllers. */
import { afterEach, describe, expect, test } from 'bun:test'
import { eventually, stopAll, withKubectl } from './fixtures'

afterEach(stopAll)

const ok = (r: { code: number; stdout: string; stderr: string }) => {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
  return r.stdout
}

/** A Job `name` in demo with one line of `spec` and one busybox container `m` running `command` (never restarted). */
const JOB = (name: string, spec: string, command: string) => `apiVersion: batch/v1
kind: Job
metadata: {name: ${name}, namespace: demo}
spec:
  ${spec}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: busybox, ${command}}]
`

const CHART_KINDS = `apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: demo}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: demo}
spec:
  ingressClassName: nginx
  rules: [{host: app.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: app, namespace: demo}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 4}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: demo}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: demo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: app, namespace: demo}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: app-reader}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: app-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: app-reader}
subjects: [{kind: Group, name: devs}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: demo}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: app, namespace: demo}
spec: {podSelector: {matchLabels: {app: web}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: demo}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: demo}
spec:
  schedule: "0 3 1 1 *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sh, -c, "echo hi"]}]}}}}
`

describe('kinds Helm charts install', () => {
  test("kubectl apply of a chart's kinds → created; kubectl get prints each with kubectl's columns", async () => {
    const { kubectl } = await withKubectl()
    const applied = ok(await kubectl.run(['apply', '-f', '-'], CHART_KINDS))
    expect(applied.trim().split('\n')).toEqual([
      'serviceaccount/app created',
      'ingress.networking.k8s.io/app created',
      'horizontalpodautoscaler.autoscaling/app created',
      'role.rbac.authorization.k8s.io/reader created',
      'rolebinding.rbac.authorization.k8s.io/reader created',
      'clusterrole.rbac.authorization.k8s.io/app-reader created',
      'clusterrolebinding.rbac.authorization.k8s.io/app-reader created',
      'persistentvolumeclaim/data created',
      'networkpolicy.networking.k8s.io/app created',
      'poddisruptionbudget.policy/web created',
      'cronjob.batch/nightly created',
    ])
    const get = async (...args: string[]) => ok(await kubectl.run(['get', ...args]))
    expect(await get('sa', 'app', '-n', 'demo')).toMatch(/^NAME\s+SECRETS\s+AGE\napp\s+0\s+\d+s\n$/)
    expect(await get('ingress', 'app', '-n', 'demo')).toMatch(
      /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\napp\s+nginx\s+app\.example\s+80\s+\d+s\n$/,
    )
    expect(await get('hpa', 'app', '-n', 'demo')).toMatch(
      /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\napp\s+Deployment\/web\s+<none>\s+1\s+4\s+0\s+\d+s\n$/,
    )
    expect(await get('role', 'reader', '-n', 'demo')).toMatch(/^NAME\s+CREATED AT\nreader\s+\d{4}-\d\d-\d\dT/)
    expect(await get('rolebinding', 'reader', '-n', 'demo', '-o', 'wide')).toMatch(
      /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\nreader\s+Role\/reader\s+\d+s\s+demo\/app\n$/,
    )
    expect(await get('clusterrolebinding', 'app-reader', '-o', 'wide')).toMatch(
      /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\napp-reader\s+ClusterRole\/app-reader\s+\d+s\s+devs\s+\n$/,
    )
    expect(await get('clusterrole', 'app-reader')).toMatch(/^NAME\s+CREATED AT\napp-reader\s+\d{4}-/)
    await eventually(async () =>
      /^data\s+Bound\s+pvc-[0-9a-f-]+\s+1Gi\s+RWO\s+<none>\s+\d+s$/m.test(await get('pvc', 'data', '-n', 'demo')),
    )
    expect(await get('pvc', 'data', '-n', 'demo')).toMatch(
      /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE\n/,
    )
    expect(await get('netpol', 'app', '-n', 'demo')).toMatch(/^NAME\s+POD-SELECTOR\s+AGE\napp\s+app=web\s+\d+s\n$/)
    await eventually(async () => /^web\s+1\s+N\/A\s+1\s+\d+s$/m.test(await get('pdb', 'web', '-n', 'demo')))
    expect(await get('cronjob', 'nightly', '-n', 'demo')).toMatch(
      /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nnightly\s+0 3 1 1 \*\s+<none>\s+False\s+0\s+<none>\s+\d+s\n$/,
    )
  }, 30_000)

  test('kubectl get --watch on ingresses → the created ingress arrives as a watch event', async () => {
    const { k, kubectl } = await withKubectl()
    const watching = k.emulator.subscribers()
    const watch = kubectl.spawn(['get', 'ingress', '-n', 'demo', '--watch', '-o', 'name'])
    const reader = (watch.stdout as ReadableStream<Uint8Array>).getReader()
    // The ingress is created once kubectl's watch is open, so it can only arrive as a watch event.
    await eventually(() => k.emulator.subscribers() > watching, 10_000)
    ok(await kubectl.run(['apply', '-f', '-'], CHART_KINDS.split('---')[1]))
    let text = ''
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value)
    watch.kill()
    expect(text).toBe('ingress.networking.k8s.io/app\n')
  })

  test('a Job whose pods run a shell command → kubectl wait --for=condition=complete returns; get job shows Complete 2/2; logs show its output', async () => {
    const { kubectl } = await withKubectl()
    ok(
      await kubectl.run(['apply', '-f', '-'], JOB('migrate', 'completions: 2', 'command: [sh, -c], args: ["echo migrating && sleep 0.1"]')),
    )
    expect(ok(await kubectl.run(['wait', '--for=condition=complete', 'job/migrate', '-n', 'demo', '--timeout=20s']))).toBe(
      'job.batch/migrate condition met\n',
    )
    expect(ok(await kubectl.run(['get', 'job', 'migrate', '-n', 'demo']))).toMatch(
      /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nmigrate\s+Complete\s+2\/2\s+\d+s\s+\d+s\n$/,
    )
    const pods = ok(
      await kubectl.run([
        'get',
        'pods',
        '-n',
        'demo',
        '-l',
        'job-name=migrate',
        '-o',
        'jsonpath={range .items[*]}{.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}{"\\n"}{end}',
      ]),
    )
    expect(pods).toBe('Succeeded 0\nSucceeded 0\n')
    const logs = await kubectl.run(['logs', 'job/migrate', '-n', 'demo'])
    expect([logs.code, logs.stdout, logs.stderr]).toEqual([
      0,
      'migrating\n',
      expect.stringMatching(/^Found 2 pods, using pod\/migrate-\w{5}\n$/),
    ])
    expect(ok(await kubectl.run(['logs', '-n', 'demo', '-l', 'job-name=migrate', '--timestamps']))).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z migrating\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z migrating\n$/,
    )
    expect(ok(await kubectl.run(['get', 'pods', '-n', 'demo', '-l', 'job-name=migrate', '--no-headers']))).toMatch(
      /^migrate-\w{5}\s+0\/1\s+Completed\s+0\s+\d+s\nmigrate-\w{5}\s+0\/1\s+Completed\s+0\s+\d+s\n$/,
    )
  })

  test('a Job whose command exits 2 past its backoffLimit → kubectl wait --for=condition=failed returns; two failed pods', async () => {
    const { kubectl } = await withKubectl()
    ok(await kubectl.run(['apply', '-f', '-'], JOB('broken', 'backoffLimit: 1', 'command: [sh, -c, "exit 2"]')))
    expect(ok(await kubectl.run(['wait', '--for=condition=failed', 'job/broken', '-n', 'demo', '--timeout=20s']))).toBe(
      'job.batch/broken condition met\n',
    )
    expect(ok(await kubectl.run(['get', 'job', 'broken', '-n', 'demo', '-o', 'jsonpath={.status.failed}']))).toBe('2')
  })

  /** An emulator on a clock the test moves, with the CronJob `report` (every five minutes, one finished Job kept). */
  async function withCronJob() {
    let now = Date.now()
    const { k, kubectl } = await withKubectl({ clock: () => now, cronIntervalMs: 20 })
    ok(
      await kubectl.run(
        ['apply', '-f', '-'],
        `apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: demo}
spec:
  schedule: "*/5 * * * *"
  successfulJobsHistoryLimit: 1
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sh, -c, "echo report"]}]}}}}
`,
      ),
    )
    const jobs = async () => (await k.json('GET', '/apis/batch/v1/namespaces/demo/jobs')).body.items.map((j: any) => j.metadata.name).sort()
    /** Moves the emulator clock on by `ms`; returns the name of the Job a run due then gets. */
    const advance = (ms: number) => {
      now += ms
      return `report-${Math.floor(now / 300_000) * 5}`
    }
    return { k, kubectl, jobs, advance }
  }

  test('a CronJob before its scheduled minute → no Job', async () => {
    const { k, jobs } = await withCronJob()
    await k.emulator.checkCronJobs()
    expect(await jobs()).toEqual([])
  })

  test('a CronJob → a Job once a scheduled minute passes on the emulator clock; get cronjob shows its last schedule', async () => {
    const { kubectl, jobs, advance } = await withCronJob()
    const first = advance(5 * 60_000)
    await eventually(async () => (await jobs()).join() === first)
    ok(await kubectl.run(['wait', '--for=condition=complete', `job/${first}`, '-n', 'demo', '--timeout=20s']))
    expect(ok(await kubectl.run(['get', 'cronjob', 'report', '-n', 'demo']))).toMatch(
      /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nreport\s+\*\/5 \* \* \* \*\s+<none>\s+False\s+0\s+\S+\s+\d+s\n$/,
    )
  })

  test('a CronJob keeps successfulJobsHistoryLimit finished Jobs: the next run replaces the first', async () => {
    const { kubectl, jobs, advance } = await withCronJob()
    const first = advance(5 * 60_000)
    await eventually(async () => (await jobs()).join() === first)
    ok(await kubectl.run(['wait', '--for=condition=complete', `job/${first}`, '-n', 'demo', '--timeout=20s']))
    const second = advance(5 * 60_000)
    await eventually(async () => (await jobs()).join() === second, 5000)
  })

  test('a suspended CronJob → no Job when its scheduled minute passes', async () => {
    const { k, kubectl, jobs, advance } = await withCronJob()
    ok(await kubectl.run(['patch', 'cronjob', 'report', '-n', 'demo', '--type=merge', '-p', '{"spec":{"suspend":true}}']))
    advance(10 * 60_000)
    await k.emulator.checkCronJobs()
    expect(await jobs()).toEqual([])
  })

  test('a CronJob with an impossible schedule → kubectl create fails naming spec.schedule', async () => {
    const { kubectl } = await withKubectl()
    const bad = await kubectl.run(['create', 'cronjob', 'broken', '-n', 'demo', '--image=busybox', '--schedule=61 * * * *'])
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('spec.schedule: Invalid value: "61 * * * *"')])
  })

  test('a DaemonSet → one pod per node it fits, a node tainted NoSchedule gets none; rollout history and undo work', async () => {
    const { k, kubectl } = await withKubectl()
    ok(await kubectl.run(['taint', 'node', 'node-1', 'dedicated=db:NoSchedule']))
    ok(
      await kubectl.run(
        ['apply', '-f', '-'],
        `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: demo}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: fluent-bit}]}
`,
      ),
    )
    ok(await kubectl.run(['rollout', 'status', 'daemonset/agent', '-n', 'demo', '--timeout=20s']))
    const pods = (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dagent')).body.items
    expect(pods.map((p: any) => [p.spec.nodeName, p.status.phase])).toEqual([['node-2', 'Running']])
    expect(ok(await kubectl.run(['get', 'ds', 'agent', '-n', 'demo']))).toMatch(
      /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+1\s+1\s+1\s+1\s+1\s+<none>\s+\d+s\n$/,
    )
    expect(ok(await kubectl.run(['rollout', 'history', 'daemonset/agent', '-n', 'demo']))).toMatch(
      /^daemonset.apps\/agent \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n\n$/,
    )
    ok(await kubectl.run(['set', 'image', 'daemonset/agent', 'agent=fluent-bit:3', '-n', 'demo']))
    ok(await kubectl.run(['rollout', 'status', 'daemonset/agent', '-n', 'demo', '--timeout=20s']))
    expect(ok(await kubectl.run(['rollout', 'undo', 'daemonset/agent', '-n', 'demo']))).toBe('daemonset.apps/agent rolled back\n')
    await eventually(
      async () =>
        (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dagent')).body.items
          .map((p: any) => `${p.spec.containers[0].image} ${p.status.phase}`)
          .join() === 'fluent-bit Running',
    )
    ok(await kubectl.run(['taint', 'node', 'node-1', 'dedicated-']))
    await eventually(
      async () =>
        (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dagent')).body.items
          .filter((p: any) => p.status.phase === 'Running')
          .map((p: any) => p.spec.nodeName)
          .sort()
          .join() === 'node-1,node-2',
    )
  })

  test('a Service with a selector → Endpoints and an EndpointSlice with the running pods; scaling follows', async () => {
    const { k, kubectl } = await withKubectl()
    const ips = async () =>
      (await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')).body.items.map((p: any) => p.status.podIP).sort()
    const ep = await eventually(async () => {
      const out = ok(await kubectl.run(['get', 'endpoints', 'web', '-n', 'demo']))
      return /10\.244/.test(out) ? out : undefined
    })
    const expected = (await ips()).map((ip: string) => `${ip}:80`)
    expect(ep).toMatch(/^NAME\s+ENDPOINTS\s+AGE\nweb\s+\S+\s+\d+s\n$/)
    expect(ep.split('\n')[1].split(/\s+/)[1].split(',').sort()).toEqual(expected.sort())
    const slices = ok(await kubectl.run(['get', 'endpointslices', '-n', 'demo', '-l', 'kubernetes.io/service-name=web']))
    expect(slices).toMatch(/^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\nweb-\w{5}\s+IPv4\s+80\s+\S+\s+\d+s\n$/)
    ok(await kubectl.run(['scale', 'deployment/web', '-n', 'demo', '--replicas=3']))
    await eventually(async () => {
      const body = (await k.json('GET', '/api/v1/namespaces/demo/endpoints/web')).body
      return body.subsets?.[0]?.addresses?.length === 3
    })
    ok(await kubectl.run(['delete', 'service', 'web', '-n', 'demo']))
    await eventually(
      async () =>
        (await k.get('/api/v1/namespaces/demo/endpoints/web')).status === 404 &&
        (await k.json('GET', '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices')).body.items.length === 0,
    )
  })
})
