/** The core group (`/api/v1`): namespaces, pods, services, config, storage claims, events, nodes. */
import { isObject, type KubeObject, required, type StatusCause } from '../../kube'
import { at, type BuiltinEntry, defaultPodSpec, fieldAt, validateContainers } from './strategy'

/** Guaranteed when every container's limits equal its requests, BestEffort when none set any, else Burstable. */
function qosOf(containers: unknown): string {
  const resources = (Array.isArray(containers) ? containers : []).map((c) => fieldAt(c, ['resources'])).map((r) => (isObject(r) ? r : {}))
  const set = (r: Record<string, unknown>, k: string) => isObject(r[k]) && Object.keys(r[k]).length > 0
  if (resources.every((r) => !set(r, 'requests') && !set(r, 'limits'))) return 'BestEffort'
  const guaranteed = resources.every((r) => {
    const limits = isObject(r.limits) ? r.limits : {}
    const requests = isObject(r.requests) ? r.requests : limits
    return ['cpu', 'memory'].every((k) => limits[k] !== undefined && (requests[k] ?? limits[k]) === limits[k])
  })
  return guaranteed ? 'Guaranteed' : 'Burstable'
}

/** Secret `stringData` is a write-only convenience: merged into `data` as base64 and never stored. */
function canonicalSecret(obj: KubeObject): void {
  if (!isObject(obj.stringData)) {
    delete obj.stringData
    return
  }
  const data = isObject(obj.data) ? obj.data : (obj.data = {})
  for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64')
  delete obj.stringData
}

/** Service ports default to TCP and to a targetPort equal to the port. */
function canonicalService(obj: KubeObject): void {
  for (const port of Array.isArray(fieldAt(obj, ['spec', 'ports'])) ? (fieldAt(obj, ['spec', 'ports']) as unknown[]) : []) {
    if (!isObject(port)) continue
    port.protocol ??= 'TCP'
    port.targetPort ??= port.port ?? null
  }
}

const eventFields = Object.fromEntries(
  ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
    `involvedObject.${f}`,
    at(`involvedObject.${f}`),
  ]),
) as Record<string, (obj: KubeObject) => string>

export const CORE: Record<string, BuiltinEntry> = {
  '/namespaces': {
    versions: ['v1'],
    strategy: {
      kind: 'Namespace',
      singular: 'namespace',
      namespaced: false,
      shortNames: ['ns'],
      subresources: { status: true },
      strategicMerge: true,
      dnsLabelName: true,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      fields: { 'status.phase': at('status.phase') },
      prepareForCreate: (obj) => {
        obj.status = { phase: 'Active' }
        obj.spec = { finalizers: ['kubernetes'] }
      },
      // The apiserver keeps this label equal to the name, whatever a client writes.
      canonicalize: (obj) => {
        obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name ?? '' }
      },
    },
  },
  '/pods': {
    versions: ['v1'],
    strategy: {
      kind: 'Pod',
      singular: 'pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      subresources: { status: true, log: true, exec: true, attach: true, portforward: true },
      strategicMerge: true,
      returnsDeletedObject: true,
      fields: Object.fromEntries(
        [
          'spec.nodeName',
          'spec.restartPolicy',
          'spec.schedulerName',
          'spec.serviceAccountName',
          'status.phase',
          'status.podIP',
          'status.nominatedNodeName',
        ].map((f) => [f, at(f)]),
      ),
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.restartPolicy ??= 'Always'
        spec.serviceAccountName ??= 'default'
        spec.schedulerName ??= 'default-scheduler'
        obj.status = { phase: 'Pending', qosClass: qosOf(fieldAt(spec, ['containers'])) }
      },
      canonicalize: (obj) => defaultPodSpec(obj.spec),
      validate: (obj) => validateContainers(obj.spec, 'spec'),
    },
  },
  '/services': {
    versions: ['v1'],
    strategy: {
      kind: 'Service',
      singular: 'service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      dnsLabelName: true,
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.type ??= 'ClusterIP'
        if (spec.type !== 'ExternalName' && spec.clusterIP === undefined)
          spec.clusterIP = `10.96.${(Math.random() * 250) | 0}.${1 + ((Math.random() * 250) | 0)}`
        obj.status = { loadBalancer: {} }
      },
      canonicalize: canonicalService,
    },
  },
  '/endpoints': {
    versions: ['v1'],
    strategy: { kind: 'Endpoints', singular: 'endpoints', namespaced: true, shortNames: ['ep'], strategicMerge: true },
  },
  '/configmaps': {
    versions: ['v1'],
    strategy: { kind: 'ConfigMap', singular: 'configmap', namespaced: true, shortNames: ['cm'], strategicMerge: true },
  },
  '/secrets': {
    versions: ['v1'],
    strategy: {
      kind: 'Secret',
      singular: 'secret',
      namespaced: true,
      strategicMerge: true,
      fields: { type: at('type') },
      prepareForCreate: (obj) => {
        obj.type ??= 'Opaque'
      },
      canonicalize: canonicalSecret,
    },
  },
  '/serviceaccounts': {
    versions: ['v1'],
    strategy: { kind: 'ServiceAccount', singular: 'serviceaccount', namespaced: true, shortNames: ['sa'], strategicMerge: true },
  },
  '/persistentvolumeclaims': {
    versions: ['v1'],
    strategy: {
      kind: 'PersistentVolumeClaim',
      singular: 'persistentvolumeclaim',
      namespaced: true,
      shortNames: ['pvc'],
      subresources: { status: true },
      strategicMerge: true,
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.volumeMode ??= 'Filesystem'
        obj.status = { phase: 'Pending' }
      },
      validate: (obj) => {
        const causes: StatusCause[] = []
        if (!Array.isArray(fieldAt(obj, ['spec', 'accessModes'])) || !(fieldAt(obj, ['spec', 'accessModes']) as unknown[]).length)
          causes.push(required('spec.accessModes'))
        if (fieldAt(obj, ['spec', 'resources', 'requests', 'storage']) === undefined) causes.push(required('spec.resources[storage]'))
        return causes
      },
    },
  },
  '/events': {
    versions: ['v1'],
    strategy: {
      kind: 'Event',
      singular: 'event',
      namespaced: true,
      shortNames: ['ev'],
      strategicMerge: true,
      fields: {
        ...eventFields,
        reason: at('reason'),
        type: at('type'),
        source: at('source.component'),
        reportingComponent: at('reportingComponent'),
      },
    },
  },
  '/nodes': {
    versions: ['v1'],
    strategy: {
      kind: 'Node',
      singular: 'node',
      namespaced: false,
      shortNames: ['no'],
      subresources: { status: true },
      strategicMerge: true,
      fields: { 'spec.unschedulable': (o) => String(fieldAt(o, ['spec', 'unschedulable']) === true) },
    },
  },
}
