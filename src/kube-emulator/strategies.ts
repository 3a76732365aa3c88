/**
 * What differs between resources, as table entries: scope, names, subresources, field labels,
 * defaults and validation. The generic registry asks these entries and nothing else, so a new
 * built-in kind costs one entry; CustomResourceDefinitions produce entries at run time.
 */
import { invalidValue, isObject, type JsonObject, type KubeObject, required, type StatusCause } from '../kube'
import { parseSchedule, validTimeZone } from './cron'

/** Where a `/scale` subresource reads and writes replicas. */
export interface ScaleSpec {
  specReplicasPath: string[]
  statusReplicasPath: string[]
  labelSelectorPath?: string[]
}

/**
 * Subresources a kind serves. `status`: main-resource writes ignore `.status` and `/status` writes
 * change only `.status`; `scale`: an autoscaling/v1 Scale over the paths named; `log` and `exec`:
 * a pod's container output and commands.
 */
export interface Subresources {
  status?: true
  scale?: ScaleSpec
  log?: true
  exec?: true
}

/** A column of a CRD's `additionalPrinterColumns`, used for Table output. */
export interface PrinterColumn {
  name: string
  type: string
  jsonPath: string
  description?: string
  priority?: number
  format?: string
}

export interface Strategy {
  kind: string
  singular: string
  namespaced: boolean
  shortNames?: string[]
  categories?: string[]
  verbs?: string[]
  /** The subresources served under `{name}/…`; discovery lists them and the server routes to them from here. */
  subresources?: Subresources
  /** Names must be RFC 1123 labels (no dots), not subdomains: namespaces and services. */
  dnsLabelName?: boolean
  /** A custom resource: list items keep apiVersion and kind, as unstructured objects do (built-in lists drop them). */
  custom?: boolean
  /** Built-in Go types accept strategic merge patch; custom resources answer 415. */
  strategicMerge?: boolean
  /** `metadata.generation` bumps when anything outside metadata and status changes. */
  tracksGeneration?: boolean
  /** Delete answers the object (pods, custom resources) rather than a success Status. */
  returnsDeletedObject?: boolean
  /** Field-selector labels beyond `metadata.name` and `metadata.namespace`. */
  fields?: Record<string, (obj: KubeObject) => string>
  printerColumns?: PrinterColumn[]
  /** Called before validation on create: defaults and server-owned fields. Mutates `obj`. */
  prepareForCreate?(obj: KubeObject): void
  /** Called on create and on every write but status writes: defaults and normal forms (`stringData` into `data`). Mutates `obj`. */
  canonicalize?(obj: KubeObject): void
  /** Pure check on create and update; returns one cause per offending field. */
  validate?(obj: KubeObject): StatusCause[]
}

/** What a stored resource serves unless its strategy narrows it. */
export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

/** Reads a dotted path of plain keys, answering '' when absent, as field selectors compare strings. */
export function fieldAt(obj: unknown, path: string[]): unknown {
  let cur: unknown = obj
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined
  return cur
}
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v))
const at = (path: string) => (obj: KubeObject) => text(fieldAt(obj, path.split('.')))

function validateContainers(spec: unknown, field: string): StatusCause[] {
  const containers = fieldAt(spec, ['containers'])
  if (!Array.isArray(containers) || !containers.length) return [required(`${field}.containers`)]
  return containers.flatMap((c, i) => [
    ...(isObject(c) && typeof c.name === 'string' && c.name ? [] : [required(`${field}.containers[${i}].name`)]),
    ...(isObject(c) && typeof c.image === 'string' && c.image ? [] : [required(`${field}.containers[${i}].image`)]),
  ])
}

/** Workloads: a selector that matches the template's labels, non-negative replicas, containers. */
function validateWorkload(obj: KubeObject): StatusCause[] {
  const replicas = fieldAt(obj, ['spec', 'replicas'])
  const causes =
    replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
      ? [invalidValue('spec.replicas', replicas, 'must be greater than or equal to 0')]
      : []
  return [...causes, ...validateSelector(obj), ...validateContainers(fieldAt(obj, ['spec', 'template', 'spec']), 'spec.template.spec')]
}

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

/** Replicas default to 1; kinds with an update strategy get its rolling-update default. */
const defaultWorkload =
  (kind: string) =>
  (obj: KubeObject): void => {
    const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
    if (kind !== 'DaemonSet') spec.replicas ??= 1
    if (kind !== 'ReplicaSet') spec.revisionHistoryLimit ??= 10
    const field = kind === 'Deployment' ? 'strategy' : 'updateStrategy'
    if (DEFAULT_UPDATE[kind]) spec[field] ??= DEFAULT_UPDATE[kind]
  }

/** A pod spec's containers (regular, init, ephemeral): ports default to `protocol: TCP` as the apiserver's defaulting does. */
function defaultPodSpec(spec: unknown): void {
  if (!isObject(spec)) return
  for (const field of ['containers', 'initContainers', 'ephemeralContainers'])
    for (const c of Array.isArray(spec[field]) ? spec[field] : [])
      for (const port of isObject(c) && Array.isArray(c.ports) ? c.ports : []) if (isObject(port)) port.protocol ??= 'TCP'
}

/** Defaults of the pod template inside a workload (`spec.template`, or a CronJob's `spec.jobTemplate.spec.template`). */
const canonicalTemplate =
  (...path: string[]) =>
  (obj: KubeObject) =>
    defaultPodSpec(fieldAt(obj, [...path, 'template', 'spec']))

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

/** The rolling-update defaults of Deployments, StatefulSets and DaemonSets. */
const DEFAULT_UPDATE: Record<string, JsonObject> = {
  Deployment: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
  StatefulSet: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
  DaemonSet: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
}

/** A Job's selector and its pods' labels name the Job's uid, as the apiserver's Job defaulting does. */
function prepareJob(obj: KubeObject): void {
  const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
  const uid = obj.metadata.uid ?? ''
  const name = obj.metadata.name ?? ''
  spec.parallelism ??= 1
  spec.completions ??= 1
  spec.backoffLimit ??= 6
  spec.completionMode ??= 'NonIndexed'
  spec.suspend ??= false
  if (spec.manualSelector !== true) spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } }
  const template = isObject(spec.template) ? spec.template : (spec.template = {})
  const meta = isObject(template.metadata) ? template.metadata : (template.metadata = {})
  meta.labels = {
    ...(isObject(meta.labels) ? meta.labels : {}),
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': name,
    'controller-uid': uid,
    'job-name': name,
  }
  obj.status = {}
}

/** A Job's pods must not restart forever: `Never` or `OnFailure`. */
function validateJob(obj: KubeObject): StatusCause[] {
  const policy = fieldAt(obj, ['spec', 'template', 'spec', 'restartPolicy'])
  const causes = validateContainers(fieldAt(obj, ['spec', 'template', 'spec']), 'spec.template.spec')
  if (policy !== 'Never' && policy !== 'OnFailure')
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(policy ?? '')}: supported values: "OnFailure", "Never"`,
      field: 'spec.template.spec.restartPolicy',
    })
  return causes
}

/** A schedule cron can read and a time zone Intl knows. */
function validateCronJob(obj: KubeObject): StatusCause[] {
  const schedule = fieldAt(obj, ['spec', 'schedule'])
  const timeZone = fieldAt(obj, ['spec', 'timeZone'])
  const causes: StatusCause[] = []
  if (typeof schedule !== 'string' || !schedule) causes.push(required('spec.schedule'))
  else {
    try {
      parseSchedule(schedule)
    } catch (e) {
      causes.push(invalidValue('spec.schedule', schedule, e instanceof Error ? e.message : 'invalid schedule'))
    }
  }
  if (timeZone !== undefined && (typeof timeZone !== 'string' || !validTimeZone(timeZone)))
    causes.push(invalidValue('spec.timeZone', timeZone, 'unknown time zone'))
  return causes
}

/** Selector and template rules shared by DaemonSets (no replicas) and the replicated workloads. */
function validateSelector(obj: KubeObject): StatusCause[] {
  const matchLabels = fieldAt(obj, ['spec', 'selector', 'matchLabels'])
  const templateLabels = fieldAt(obj, ['spec', 'template', 'metadata', 'labels'])
  if (!isObject(fieldAt(obj, ['spec', 'selector']))) return [required('spec.selector')]
  if (isObject(matchLabels) && Object.entries(matchLabels).some(([k, v]) => !isObject(templateLabels) || templateLabels[k] !== v))
    return [invalidValue('spec.template.metadata.labels', templateLabels ?? {}, '`selector` does not match template `labels`')]
  return []
}

/** Names of the RBAC kinds (roles and bindings), stored for charts; authorization does not read them. */
const rbac = (kind: string, namespaced: boolean): { versions: string[]; strategy: Strategy } => ({
  versions: ['v1'],
  strategy: {
    kind,
    singular: kind.toLowerCase(),
    namespaced,
    validate: (obj) => (kind.endsWith('Binding') && !isObject(obj.roleRef) ? [required('roleRef')] : []),
  },
})

const WORKLOAD_SCALE: ScaleSpec = {
  specReplicasPath: ['spec', 'replicas'],
  statusReplicasPath: ['status', 'replicas'],
  labelSelectorPath: ['spec', 'selector'],
}

const eventFields = Object.fromEntries(
  ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
    `involvedObject.${f}`,
    at(`involvedObject.${f}`),
  ]),
) as Record<string, (obj: KubeObject) => string>

/** Built-in resources, keyed `group/resource` (core group ''), with their served versions. */
export const BUILTIN: Record<string, { versions: string[]; strategy: Strategy }> = {
  '/namespaces': {
    versions: ['v1'],
    strategy: {
      kind: 'Namespace',
      singular: 'namespace',
      namespaced: false,
      shortNames: ['ns'],
      subresources: { status: true },
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
      subresources: { status: true, log: true, exec: true },
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
  'apps/deployments': {
    versions: ['v1'],
    strategy: {
      kind: 'Deployment',
      singular: 'deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: { status: true, scale: WORKLOAD_SCALE },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        defaultWorkload('Deployment')(obj)
        ;(obj.spec as JsonObject).progressDeadlineSeconds ??= 600
      },
      canonicalize: canonicalTemplate('spec'),
      validate: validateWorkload,
    },
  },
  'apps/replicasets': {
    versions: ['v1'],
    strategy: {
      kind: 'ReplicaSet',
      singular: 'replicaset',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      subresources: { status: true, scale: WORKLOAD_SCALE },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: defaultWorkload('ReplicaSet'),
      canonicalize: canonicalTemplate('spec'),
      validate: validateWorkload,
    },
  },
  'apps/statefulsets': {
    versions: ['v1'],
    strategy: {
      kind: 'StatefulSet',
      singular: 'statefulset',
      namespaced: true,
      shortNames: ['sts'],
      categories: ['all'],
      subresources: { status: true, scale: WORKLOAD_SCALE },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        defaultWorkload('StatefulSet')(obj)
        ;(obj.spec as JsonObject).podManagementPolicy ??= 'OrderedReady'
      },
      canonicalize: canonicalTemplate('spec'),
      validate: validateWorkload,
    },
  },
  'apps/daemonsets': {
    versions: ['v1'],
    strategy: {
      kind: 'DaemonSet',
      singular: 'daemonset',
      namespaced: true,
      shortNames: ['ds'],
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: defaultWorkload('DaemonSet'),
      canonicalize: canonicalTemplate('spec'),
      validate: (obj) => [
        ...validateSelector(obj),
        ...validateContainers(fieldAt(obj, ['spec', 'template', 'spec']), 'spec.template.spec'),
      ],
    },
  },
  'batch/jobs': {
    versions: ['v1'],
    strategy: {
      kind: 'Job',
      singular: 'job',
      namespaced: true,
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: prepareJob,
      canonicalize: canonicalTemplate('spec'),
      validate: validateJob,
    },
  },
  'batch/cronjobs': {
    versions: ['v1'],
    strategy: {
      kind: 'CronJob',
      singular: 'cronjob',
      namespaced: true,
      shortNames: ['cj'],
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.suspend ??= false
        spec.concurrencyPolicy ??= 'Allow'
        spec.successfulJobsHistoryLimit ??= 3
        spec.failedJobsHistoryLimit ??= 1
        obj.status = {}
      },
      canonicalize: canonicalTemplate('spec', 'jobTemplate', 'spec'),
      validate: validateCronJob,
    },
  },
  'apps/controllerrevisions': {
    versions: ['v1'],
    strategy: {
      kind: 'ControllerRevision',
      singular: 'controllerrevision',
      namespaced: true,
      strategicMerge: true,
      validate: (obj) => (typeof obj.revision === 'number' && Number.isInteger(obj.revision) ? [] : [required('revision')]),
    },
  },
  'autoscaling/horizontalpodautoscalers': {
    versions: ['v2', 'v1'],
    strategy: {
      kind: 'HorizontalPodAutoscaler',
      singular: 'horizontalpodautoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      validate: (obj) => {
        const causes: StatusCause[] = []
        if (!isObject(fieldAt(obj, ['spec', 'scaleTargetRef']))) causes.push(required('spec.scaleTargetRef'))
        if (typeof fieldAt(obj, ['spec', 'maxReplicas']) !== 'number') causes.push(required('spec.maxReplicas'))
        return causes
      },
    },
  },
  'networking.k8s.io/ingresses': {
    versions: ['v1'],
    strategy: {
      kind: 'Ingress',
      singular: 'ingress',
      namespaced: true,
      shortNames: ['ing'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        obj.status = { loadBalancer: {} }
      },
    },
  },
  'networking.k8s.io/networkpolicies': {
    versions: ['v1'],
    strategy: {
      kind: 'NetworkPolicy',
      singular: 'networkpolicy',
      namespaced: true,
      shortNames: ['netpol'],
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.podSelector ??= {}
        spec.policyTypes ??= ['Ingress', ...(spec.egress !== undefined ? ['Egress'] : [])]
      },
    },
  },
  'discovery.k8s.io/endpointslices': {
    versions: ['v1'],
    strategy: {
      kind: 'EndpointSlice',
      singular: 'endpointslice',
      namespaced: true,
      strategicMerge: true,
      validate: (obj) => (typeof obj.addressType === 'string' ? [] : [required('addressType')]),
    },
  },
  'policy/poddisruptionbudgets': {
    versions: ['v1'],
    strategy: {
      kind: 'PodDisruptionBudget',
      singular: 'poddisruptionbudget',
      namespaced: true,
      shortNames: ['pdb'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
    },
  },
  'rbac.authorization.k8s.io/roles': rbac('Role', true),
  'rbac.authorization.k8s.io/rolebindings': rbac('RoleBinding', true),
  'rbac.authorization.k8s.io/clusterroles': rbac('ClusterRole', false),
  'rbac.authorization.k8s.io/clusterrolebindings': rbac('ClusterRoleBinding', false),
  'apiextensions.k8s.io/customresourcedefinitions': {
    versions: ['v1'],
    strategy: {
      kind: 'CustomResourceDefinition',
      singular: 'customresourcedefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      subresources: { status: true },
      tracksGeneration: true,
      validate: validateCrd,
    },
  },
}

function validateCrd(obj: KubeObject): StatusCause[] {
  const spec = isObject(obj.spec) ? obj.spec : {}
  const names = isObject(spec.names) ? spec.names : {}
  const causes: StatusCause[] = []
  if (typeof spec.group !== 'string' || !spec.group) causes.push(required('spec.group'))
  if (typeof names.plural !== 'string' || !names.plural) causes.push(required('spec.names.plural'))
  if (typeof names.kind !== 'string' || !names.kind) causes.push(required('spec.names.kind'))
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    causes.push(invalidValue('spec.scope', spec.scope ?? '', 'should be either Cluster or Namespaced'))
  if (!Array.isArray(spec.versions) || !spec.versions.some((v) => isObject(v) && v.served === true)) causes.push(required('spec.versions'))
  if (!causes.length && obj.metadata.name !== `${String(names.plural)}.${String(spec.group)}`)
    causes.push(invalidValue('metadata.name', obj.metadata.name, `must be spec.names.plural+"."+spec.group`))
  return causes
}

/** The strategy of a custom resource, read from its CRD: scope, names, subresources, printer columns. */
export function strategyFromCrd(crd: KubeObject): { group: string; resource: string; versions: string[]; strategy: Strategy } {
  const spec = crd.spec as JsonObject
  const names = spec.names as JsonObject
  const versions = (spec.versions as JsonObject[]).filter((v) => v.served === true)
  versions.sort((a, b) => Number(b.storage === true) - Number(a.storage === true))
  const first = versions[0]
  const subresources = isObject(first.subresources) ? first.subresources : {}
  const scale = isObject(subresources.scale) ? subresources.scale : undefined
  const columns = Array.isArray(first.additionalPrinterColumns) ? (first.additionalPrinterColumns as unknown[]).filter(isObject) : []
  const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined)
  return {
    group: String(spec.group),
    resource: String(names.plural),
    versions: versions.map((v) => String(v.name)),
    strategy: {
      kind: String(names.kind),
      singular: String(names.singular ?? String(names.kind).toLowerCase()),
      namespaced: spec.scope === 'Namespaced',
      custom: true,
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      tracksGeneration: true,
      returnsDeletedObject: true,
      subresources: {
        ...(isObject(subresources.status) ? { status: true } : {}),
        ...(scale
          ? {
              scale: {
                specReplicasPath: jsonPathKeys(String(scale.specReplicasPath)),
                statusReplicasPath: jsonPathKeys(String(scale.statusReplicasPath)),
                labelSelectorPath: typeof scale.labelSelectorPath === 'string' ? jsonPathKeys(scale.labelSelectorPath) : undefined,
              },
            }
          : {}),
      },
      printerColumns: columns.map((c) => ({
        name: String(c.name),
        type: String(c.type ?? 'string'),
        jsonPath: String(c.jsonPath ?? ''),
        description: typeof c.description === 'string' ? c.description : undefined,
        priority: typeof c.priority === 'number' ? c.priority : 0,
        format: typeof c.format === 'string' ? c.format : undefined,
      })),
    },
  }
}

/** `.spec.replicas` → ['spec', 'replicas']; CRD paths are simple dotted paths. */
function jsonPathKeys(path: string): string[] {
  return path.split('.').filter(Boolean)
}

const isStringMap = (v: unknown) => v === undefined || (isObject(v) && Object.values(v).every((x) => typeof x === 'string'))
const isStringList = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'))
const isOwnerList = (v: unknown) =>
  v === undefined ||
  (Array.isArray(v) &&
    v.every(
      (o) =>
        isObject(o) &&
        ['apiVersion', 'kind', 'name', 'uid'].every((k) => typeof o[k] === 'string') &&
        (o.controller === undefined || typeof o.controller === 'boolean'),
    ))

/** What the Go decoder would refuse in ObjectMeta, in its wording; undefined when the shape is fine. */
export function metadataDecodeError(meta: Record<string, unknown>): string | undefined {
  const wrong = (field: string, type: string) => `json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} of type ${type}`
  for (const k of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'])
    if (meta[k] !== undefined && typeof meta[k] !== 'string') return wrong(k, 'string')
  if (!isStringMap(meta.labels)) return wrong('labels', 'map[string]string')
  if (!isStringMap(meta.annotations)) return wrong('annotations', 'map[string]string')
  if (!isStringList(meta.finalizers)) return wrong('finalizers', '[]string')
  if (!isOwnerList(meta.ownerReferences)) return wrong('ownerReferences', '[]v1.OwnerReference')
  return undefined
}
