import { afterEach, describe, expect, test } from 'bun:test'
import { BUILTIN } from '../../src/kube-emulator/strategies'
import { emulator, stopAll } from './fixtures'

afterEach(stopAll)

const template = { metadata: { labels: { app: 'c' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }
const workload = { spec: { replicas: 1, selector: { matchLabels: { app: 'c' } }, template } }

/** One valid object per built-in resource, keyed like BUILTIN (`group/resource`). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  '/namespaces': {},
  '/pods': { spec: template.spec },
  '/services': { spec: { ports: [{ port: 80 }] } },
  '/configmaps': { data: { a: '1' } },
  '/secrets': { stringData: { a: '1' } },
  '/serviceaccounts': {},
  '/events': { involvedObject: { kind: 'Pod', name: 'x', namespace: 'demo' }, reason: 'Test', message: 'm', type: 'Normal' },
  '/nodes': { spec: {} },
  'apps/deployments': workload,
  'apps/replicasets': workload,
  'apps/statefulsets': workload,
  'autoscaling/horizontalpodautoscalers': {
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
  },
  '/endpoints': { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
  '/persistentvolumeclaims': { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  'apps/controllerrevisions': { data: { spec: { template: template } }, revision: 1 },
  'apps/daemonsets': { spec: { selector: workload.spec.selector, template } },
  'batch/jobs': { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } },
  'batch/cronjobs': {
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } },
    },
  },
  'networking.k8s.io/ingresses': {
    spec: {
      rules: [
        {
          host: 'a.example',
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] },
        },
      ],
    },
  },
  'networking.k8s.io/networkpolicies': { spec: { podSelector: { matchLabels: { app: 'c' } } } },
  'discovery.k8s.io/endpointslices': { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }] },
  'policy/poddisruptionbudgets': { spec: { minAvailable: 1, selector: { matchLabels: { app: 'c' } } } },
  'rbac.authorization.k8s.io/roles': { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
  'rbac.authorization.k8s.io/rolebindings': {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'User', name: 'u' }],
  },
  'rbac.authorization.k8s.io/clusterroles': { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
  'rbac.authorization.k8s.io/clusterrolebindings': {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
    subjects: [{ kind: 'User', name: 'u' }],
  },
  'apiextensions.k8s.io/customresourcedefinitions': {
    spec: {
      group: 'conf.io',
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [{ name: 'v1', served: true, storage: true }],
    },
  },
}

test('every built-in strategy has a conformance sample', () => {
  expect(Object.keys(SAMPLES).sort()).toEqual(Object.keys(BUILTIN).sort())
})

for (const [key, { versions, strategy }] of Object.entries(BUILTIN)) {
  const [group, resource] = key.split('/')
  const base = `${group ? `/apis/${group}` : '/api'}/${versions[0]}${strategy.namespaced ? '/namespaces/demo' : ''}/${resource}`
  const name = resource === 'customresourcedefinitions' ? 'things.conf.io' : 'conformance'

  describe(`conformance of ${key}`, () => {
    test(`an admin creates, reads, lists, watches, updates and deletes a ${strategy.kind} → generic registry semantics`, async () => {
      const k = await emulator()
      const listRv = (await k.json('GET', base)).body.metadata.resourceVersion
      const created = await k.json('POST', base, { metadata: { name, labels: { suite: 'conformance' } }, ...SAMPLES[key] })
      expect(created.status).toBe(201)
      const watch = await k.get(`${base}?watch=1&labelSelector=suite%3Dconformance&resourceVersion=${listRv}`)
      const reader = watch.body!.getReader()
      let line = ''
      while (!line.includes('\n')) line += new TextDecoder().decode((await reader.read()).value)
      await reader.cancel()
      expect(JSON.parse(line.split('\n')[0])).toMatchObject({ type: 'ADDED', object: { kind: strategy.kind, metadata: { name } } })
      expect(created.body).toMatchObject({ kind: strategy.kind, metadata: { name } })
      const got = await k.json('GET', `${base}/${name}`)
      expect(got.body.metadata.uid).toBe(created.body.metadata.uid)
      const listed = await k.json('GET', `${base}?labelSelector=suite%3Dconformance`)
      expect(listed.body.kind).toBe(`${strategy.kind}List`)
      expect(listed.body.items.map((i: any) => i.metadata.name)).toEqual([name])
      const again = await k.json('POST', base, { metadata: { name }, ...SAMPLES[key] })
      expect(again.status).toBe(409)
      // Controllers may write status meanwhile, so the update retries on conflict as client-go's RetryOnConflict does.
      let updated = { status: 0, body: {} as any }
      for (let attempt = 0; attempt < 5 && updated.status !== 200; attempt++) {
        const current = (await k.json('GET', `${base}/${name}`)).body
        updated = await k.json('PUT', `${base}/${name}`, {
          ...current,
          metadata: { ...current.metadata, labels: { suite: 'conformance', v: '2' } },
        })
      }
      expect(updated.status).toBe(200)
      expect(updated.body.metadata.labels.v).toBe('2')
      const stale = await k.json('PUT', `${base}/${name}`, { ...created.body, metadata: { ...created.body.metadata, labels: { v: '3' } } })
      expect(stale.status).toBe(409)
      const deleted = await k.json('DELETE', `${base}/${name}`)
      expect(deleted.status).toBe(200)
      const gone = await k.json('GET', `${base}/${name}`)
      expect(gone.status).toBe(404)
      expect(gone.body.message).toBe(`${group ? `${resource}.${group}` : resource} "${name}" not found`)
    })

    test(`a server-side dry run creates a ${strategy.kind} → 201 with what would be stored, and nothing stored`, async () => {
      const k = await emulator()
      const dry = await k.json('POST', `${base}?dryRun=All`, { metadata: { name }, ...SAMPLES[key] })
      expect(dry.status).toBe(201)
      expect(dry.body).toMatchObject({ kind: strategy.kind, metadata: { name } })
      expect((await k.json('GET', `${base}/${name}`)).status).toBe(404)
    })

    // kubectl apply patches an existing object of a built-in kind with a strategic merge patch (a dry run too).
    test(`a strategic merge patch of a ${strategy.kind}, dry run and real → 200, stored only by the real one`, async () => {
      const k = await emulator()
      expect((await k.json('POST', base, { metadata: { name }, ...SAMPLES[key] })).status).toBe(201)
      const patch = (query: string) =>
        k.request('PATCH', `${base}/${name}${query}`, {
          body: { metadata: { labels: { patched: 'yes' } } },
          headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
        })
      const dry = await patch('?dryRun=All')
      expect(dry.status).toBe(200)
      expect((await dry.json()).metadata.labels.patched).toBe('yes')
      expect((await k.json('GET', `${base}/${name}`)).body.metadata.labels?.patched).toBeUndefined()
      expect((await patch('')).status).toBe(200)
      expect((await k.json('GET', `${base}/${name}`)).body.metadata.labels.patched).toBe('yes')
    })

    test(`an admin creates a ${strategy.kind} without a name → 422 Invalid`, async () => {
      const k = await emulator()
      const res = await k.json('POST', base, { metadata: {}, ...SAMPLES[key] })
      expect(res.status).toBe(422)
      expect(res.body.details.kind).toBe(strategy.kind)
    })
  })
}
