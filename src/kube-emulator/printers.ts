/**
 * The server-side printers kubectl relies on for `get`, after kubectl's `printers/internalversion`:
 * the columns of each built-in kind and how each cell is read from an object.
 */

import { isObject, type KubeObject } from '../kube'
import { fieldAt } from './strategies'

/** One column of a Table: its definition and how to read its cell from an object. */
export interface Column {
  name: string
  type: string
  format?: string
  description: string
  priority: number
  cell: (o: KubeObject) => string | number | boolean
}

/** kubectl's `HumanDuration`: 45s, 5m3s, 17m, 5h2m, 3d4h, 120d, 3y. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < 0) return '0s'
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`
  if (m < 180) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`
  if (h < 48) return `${h}h`
  const d = Math.floor(h / 24)
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`
  if (d < 730) return `${d}d`
  return `${Math.floor(d / 365)}y`
}

const age = (o: KubeObject) =>
  o.metadata.creationTimestamp ? humanDuration(Date.now() - Date.parse(o.metadata.creationTimestamp)) : '<unknown>'
const num = (v: unknown) => (typeof v === 'number' ? v : 0)
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isObject) : [])

export const NAME: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
}
export const AGE: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: age,
}
const col = (name: string, cell: Column['cell'], priority = 0, type = 'string'): Column => ({
  name,
  type,
  description: name,
  priority,
  cell,
})

/** kubectl's STATUS of a pod: Terminating, a waiting container's reason, a finished pod's terminated reason (Completed, Error), or the phase. */
function podStatus(o: KubeObject): string {
  if (o.metadata.deletionTimestamp) return 'Terminating'
  const phase = String(fieldAt(o, ['status', 'phase']) ?? 'Pending')
  for (const cs of list(fieldAt(o, ['status', 'containerStatuses']))) {
    const waiting = fieldAt(cs, ['state', 'waiting', 'reason'])
    if (typeof waiting === 'string') return waiting
    const terminated = fieldAt(cs, ['state', 'terminated', 'reason'])
    if (typeof terminated === 'string' && (phase === 'Succeeded' || phase === 'Failed')) return terminated
  }
  return phase
}

const containersOf = (o: KubeObject) => list(fieldAt(o, ['spec', 'template', 'spec', 'containers']))
const selectorText = (o: KubeObject) => {
  const m = fieldAt(o, ['spec', 'selector', 'matchLabels'])
  return isObject(m)
    ? Object.entries(m)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(',')
    : '<none>'
}
const WORKLOAD_WIDE = [
  col(
    'Containers',
    (o) =>
      containersOf(o)
        .map((c) => String(c.name))
        .join(','),
    1,
  ),
  col(
    'Images',
    (o) =>
      containersOf(o)
        .map((c) => String(c.image))
        .join(','),
    1,
  ),
  col('Selector', selectorText, 1),
]

function nodeReady(o: KubeObject): string {
  const ready = list(fieldAt(o, ['status', 'conditions'])).find((c) => c.type === 'Ready')
  const status = ready?.status === 'True' ? 'Ready' : 'NotReady'
  return fieldAt(o, ['spec', 'unschedulable']) === true ? `${status},SchedulingDisabled` : status
}
function nodeRoles(o: KubeObject): string {
  const roles = Object.keys(o.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice(24))
  return roles.length ? roles.sort().join(',') : '<none>'
}
const nodeAddress = (o: KubeObject) =>
  String(list(fieldAt(o, ['status', 'addresses'])).find((a) => a.type === 'InternalIP')?.address ?? '<none>')

const str = (o: unknown, ...path: string[]) => {
  const v = fieldAt(o, path)
  return v === undefined || v === null || v === '' ? '<none>' : String(v)
}
const CREATED_AT: Column = { ...AGE, name: 'Created At', type: 'date', cell: (o) => o.metadata.creationTimestamp ?? '' }
const ACCESS_MODES: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' }

/** A label selector (`matchLabels` and `matchExpressions`) as kubectl prints it; '<none>' when it selects everything. */
function labelSelectorText(sel: unknown): string {
  if (!isObject(sel)) return '<none>'
  const parts = Object.entries(isObject(sel.matchLabels) ? sel.matchLabels : {}).map(([k, v]) => `${k}=${String(v)}`)
  for (const e of list(sel.matchExpressions)) {
    const values = Array.isArray(e.values) ? e.values.map(String).join(',') : ''
    const op = String(e.operator)
    parts.push(
      op === 'Exists' ? String(e.key) : op === 'DoesNotExist' ? `!${String(e.key)}` : `${String(e.key)} ${op.toLowerCase()} (${values})`,
    )
  }
  return parts.join(',') || '<none>'
}

function jobStatus(o: KubeObject): string {
  const conditions = list(fieldAt(o, ['status', 'conditions']))
    .filter((c) => c.status === 'True')
    .map((c) => String(c.type))
  for (const type of ['Failed', 'Complete', 'Suspended', 'FailureTarget', 'SuccessCriteriaMet'])
    if (conditions.includes(type)) return type === 'SuccessCriteriaMet' ? 'Complete' : type
  return 'Running'
}

function jobDuration(o: KubeObject): string {
  const start = fieldAt(o, ['status', 'startTime'])
  if (typeof start !== 'string') return ''
  const end = fieldAt(o, ['status', 'completionTime'])
  return humanDuration((typeof end === 'string' ? Date.parse(end) : Date.now()) - Date.parse(start))
}

const subjects = (kind: string) => (o: KubeObject) =>
  list(o.subjects)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name)}` : String(s.name)))
    .join(', ')
const BINDING = [
  NAME,
  col('Role', (o) => `${str(o, 'roleRef', 'kind')}/${str(o, 'roleRef', 'name')}`),
  AGE,
  col('Users', subjects('User'), 1),
  col('Groups', subjects('Group'), 1),
  col('ServiceAccounts', subjects('ServiceAccount'), 1),
]

/** `10.244.0.11:80,10.244.0.12:80` from an Endpoints' subsets. */
function endpointsText(o: KubeObject): string {
  const out: string[] = []
  for (const subset of list(o.subsets)) {
    const ports = list(subset.ports)
    for (const a of list(subset.addresses))
      for (const p of ports.length ? ports : [{}]) out.push(p.port === undefined ? String(a.ip) : `${String(a.ip)}:${String(p.port)}`)
  }
  return out.length ? out.slice(0, 3).join(',') + (out.length > 3 ? ` + ${out.length - 3} more...` : '') : '<none>'
}

const JOB_WIDE = (path: string[]) => [
  col(
    'Containers',
    (o) =>
      list(fieldAt(o, [...path, 'containers']))
        .map((c) => String(c.name))
        .join(','),
    1,
  ),
  col(
    'Images',
    (o) =>
      list(fieldAt(o, [...path, 'containers']))
        .map((c) => String(c.image))
        .join(','),
    1,
  ),
]

/** Built-in printers keyed `group/resource`, after kubectl's `printers/internalversion`. */
export const PRINTERS: Record<string, Column[]> = {
  '/pods': [
    NAME,
    col('Ready', (o) => {
      const statuses = list(fieldAt(o, ['status', 'containerStatuses']))
      return `${statuses.filter((c) => c.ready === true).length}/${list(fieldAt(o, ['spec', 'containers'])).length}`
    }),
    col('Status', podStatus),
    col('Restarts', (o) => list(fieldAt(o, ['status', 'containerStatuses'])).reduce((n, c) => n + num(c.restartCount), 0), 0, 'integer'),
    AGE,
    col('IP', (o) => String(fieldAt(o, ['status', 'podIP']) ?? '<none>'), 1),
    col('Node', (o) => String(fieldAt(o, ['spec', 'nodeName']) ?? '<none>'), 1),
    col('Nominated Node', () => '<none>', 1),
    col('Readiness Gates', () => '<none>', 1),
  ],
  'apps/deployments': [
    NAME,
    col('Ready', (o) => `${num(fieldAt(o, ['status', 'readyReplicas']))}/${num(fieldAt(o, ['spec', 'replicas']))}`),
    col('Up-to-date', (o) => num(fieldAt(o, ['status', 'updatedReplicas'])), 0, 'integer'),
    col('Available', (o) => num(fieldAt(o, ['status', 'availableReplicas'])), 0, 'integer'),
    AGE,
    ...WORKLOAD_WIDE,
  ],
  'apps/replicasets': [
    NAME,
    col('Desired', (o) => num(fieldAt(o, ['spec', 'replicas'])), 0, 'integer'),
    col('Current', (o) => num(fieldAt(o, ['status', 'replicas'])), 0, 'integer'),
    col('Ready', (o) => num(fieldAt(o, ['status', 'readyReplicas'])), 0, 'integer'),
    AGE,
    ...WORKLOAD_WIDE,
  ],
  'apps/statefulsets': [
    NAME,
    col('Ready', (o) => `${num(fieldAt(o, ['status', 'readyReplicas']))}/${num(fieldAt(o, ['spec', 'replicas']))}`),
    AGE,
    ...WORKLOAD_WIDE.slice(0, 2),
  ],
  '/nodes': [
    NAME,
    col('Status', nodeReady),
    col('Roles', nodeRoles),
    AGE,
    col('Version', (o) => String(fieldAt(o, ['status', 'nodeInfo', 'kubeletVersion']) ?? '')),
    col('Internal-IP', nodeAddress, 1),
    col('OS-Image', (o) => String(fieldAt(o, ['status', 'nodeInfo', 'osImage']) ?? ''), 1),
    col('Kernel-Version', (o) => String(fieldAt(o, ['status', 'nodeInfo', 'kernelVersion']) ?? ''), 1),
    col('Container-Runtime', (o) => String(fieldAt(o, ['status', 'nodeInfo', 'containerRuntimeVersion']) ?? ''), 1),
  ],
  '/namespaces': [NAME, col('Status', (o) => String(fieldAt(o, ['status', 'phase']) ?? '')), AGE],
  '/services': [
    NAME,
    col('Type', (o) => String(fieldAt(o, ['spec', 'type']) ?? 'ClusterIP')),
    col('Cluster-IP', (o) => String(fieldAt(o, ['spec', 'clusterIP']) ?? '<none>')),
    col('External-IP', () => '<none>'),
    col(
      'Port(s)',
      (o) =>
        list(fieldAt(o, ['spec', 'ports']))
          .map((p) => `${String(p.port)}/${String(p.protocol ?? 'TCP')}`)
          .join(',') || '<none>',
    ),
    AGE,
  ],
  '/configmaps': [
    NAME,
    col(
      'Data',
      (o) => Object.keys(isObject(o.data) ? o.data : {}).length + Object.keys(isObject(o.binaryData) ? o.binaryData : {}).length,
      0,
      'integer',
    ),
    AGE,
  ],
  '/secrets': [
    NAME,
    col('Type', (o) => String(o.type ?? 'Opaque')),
    col('Data', (o) => Object.keys(isObject(o.data) ? o.data : {}).length, 0, 'integer'),
    AGE,
  ],
  '/serviceaccounts': [NAME, col('Secrets', (o) => list(o.secrets).length, 0, 'integer'), AGE],
  'autoscaling/horizontalpodautoscalers': [
    NAME,
    col(
      'Reference',
      (o) =>
        `${String(fieldAt(o, ['spec', 'scaleTargetRef', 'kind']) ?? '')}/${String(fieldAt(o, ['spec', 'scaleTargetRef', 'name']) ?? '')}`,
    ),
    col(
      'Targets',
      (o) =>
        list(fieldAt(o, ['spec', 'metrics']))
          .map((m) => {
            const target = fieldAt(m, ['resource', 'target', 'averageUtilization'])
            return `${String(fieldAt(m, ['resource', 'name']) ?? m.type)}: <unknown>/${target === undefined ? '?' : `${String(target)}%`}`
          })
          .join(', ') || '<none>',
    ),
    col('MinPods', (o) => num(fieldAt(o, ['spec', 'minReplicas']) ?? 1), 0, 'integer'),
    col('MaxPods', (o) => num(fieldAt(o, ['spec', 'maxReplicas'])), 0, 'integer'),
    col('Replicas', (o) => num(fieldAt(o, ['status', 'currentReplicas'])), 0, 'integer'),
    AGE,
  ],
  'apiextensions.k8s.io/customresourcedefinitions': [NAME, CREATED_AT],
  'apps/daemonsets': [
    NAME,
    ...[
      'Desired:desiredNumberScheduled',
      'Current:currentNumberScheduled',
      'Ready:numberReady',
      'Up-to-date:updatedNumberScheduled',
      'Available:numberAvailable',
    ].map((pair) => {
      const [name, field] = pair.split(':')
      return col(name, (o) => num(fieldAt(o, ['status', field])), 0, 'integer')
    }),
    col('Node Selector', (o) => {
      const sel = fieldAt(o, ['spec', 'template', 'spec', 'nodeSelector'])
      return isObject(sel) && Object.keys(sel).length
        ? Object.entries(sel)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(',')
        : '<none>'
    }),
    AGE,
    ...WORKLOAD_WIDE,
  ],
  'batch/jobs': [
    NAME,
    col('Status', jobStatus),
    col('Completions', (o) => `${num(fieldAt(o, ['status', 'succeeded']))}/${num(fieldAt(o, ['spec', 'completions']) ?? 1)}`),
    col('Duration', jobDuration),
    AGE,
    ...JOB_WIDE(['spec', 'template', 'spec']),
    col('Selector', (o) => labelSelectorText(fieldAt(o, ['spec', 'selector'])), 1),
  ],
  'batch/cronjobs': [
    NAME,
    col('Schedule', (o) => str(o, 'spec', 'schedule')),
    col('Timezone', (o) => str(o, 'spec', 'timeZone')),
    col('Suspend', (o) => (fieldAt(o, ['spec', 'suspend']) === true ? 'True' : 'False'), 0, 'boolean'),
    col('Active', (o) => list(fieldAt(o, ['status', 'active'])).length, 0, 'integer'),
    col('Last Schedule', (o) => {
      const t = fieldAt(o, ['status', 'lastScheduleTime'])
      return typeof t === 'string' ? humanDuration(Date.now() - Date.parse(t)) : '<none>'
    }),
    AGE,
    ...JOB_WIDE(['spec', 'jobTemplate', 'spec', 'template', 'spec']),
  ],
  '/persistentvolumeclaims': [
    NAME,
    col('Status', (o) => str(o, 'status', 'phase')),
    col('Volume', (o) => String(fieldAt(o, ['spec', 'volumeName']) ?? '')),
    col('Capacity', (o) => String(fieldAt(o, ['status', 'capacity', 'storage']) ?? '')),
    col('Access Modes', (o) =>
      (Array.isArray(fieldAt(o, ['status', 'accessModes'])) ? (fieldAt(o, ['status', 'accessModes']) as unknown[]) : [])
        .map((m) => ACCESS_MODES[String(m)] ?? String(m))
        .join(','),
    ),
    col('StorageClass', (o) => String(fieldAt(o, ['spec', 'storageClassName']) ?? '')),
    col('VolumeAttributesClass', (o) => str(o, 'spec', 'volumeAttributesClassName')),
    AGE,
    col('VolumeMode', (o) => str(o, 'spec', 'volumeMode'), 1),
  ],
  'apps/controllerrevisions': [
    NAME,
    col('Controller', (o) => {
      const c = o.metadata.ownerReferences?.find((r) => r.controller)
      return c ? `${c.kind.toLowerCase()}.${c.apiVersion.split('/')[0]}/${c.name}` : '<none>'
    }),
    col('Revision', (o) => num(o.revision), 0, 'integer'),
    AGE,
  ],
  '/endpoints': [NAME, col('Endpoints', endpointsText), AGE],
  'discovery.k8s.io/endpointslices': [
    NAME,
    col('AddressType', (o) => String(o.addressType ?? '')),
    col(
      'Ports',
      (o) =>
        list(o.ports)
          .map((p) => String(p.port ?? ''))
          .join(',') || '<unset>',
    ),
    col(
      'Endpoints',
      (o) =>
        list(o.endpoints)
          .flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : []))
          .join(',') || '<unset>',
    ),
    AGE,
  ],
  'networking.k8s.io/ingresses': [
    NAME,
    col('Class', (o) => str(o, 'spec', 'ingressClassName')),
    col(
      'Hosts',
      (o) =>
        list(fieldAt(o, ['spec', 'rules']))
          .map((r) => String(r.host ?? '*'))
          .join(',') || '*',
    ),
    col('Address', (o) =>
      list(fieldAt(o, ['status', 'loadBalancer', 'ingress']))
        .map((i) => String(i.ip ?? i.hostname))
        .join(','),
    ),
    col('Ports', (o) => (list(fieldAt(o, ['spec', 'tls'])).length ? '80, 443' : '80')),
    AGE,
  ],
  'networking.k8s.io/networkpolicies': [NAME, col('Pod-Selector', (o) => labelSelectorText(fieldAt(o, ['spec', 'podSelector']))), AGE],
  'policy/poddisruptionbudgets': [
    NAME,
    col('Min Available', (o) =>
      fieldAt(o, ['spec', 'minAvailable']) === undefined ? 'N/A' : String(fieldAt(o, ['spec', 'minAvailable'])),
    ),
    col('Max Unavailable', (o) =>
      fieldAt(o, ['spec', 'maxUnavailable']) === undefined ? 'N/A' : String(fieldAt(o, ['spec', 'maxUnavailable'])),
    ),
    col('Allowed Disruptions', (o) => num(fieldAt(o, ['status', 'disruptionsAllowed'])), 0, 'integer'),
    AGE,
  ],
  'rbac.authorization.k8s.io/roles': [NAME, CREATED_AT],
  'rbac.authorization.k8s.io/clusterroles': [NAME, CREATED_AT],
  'rbac.authorization.k8s.io/rolebindings': BINDING,
  'rbac.authorization.k8s.io/clusterrolebindings': BINDING,
  '/events': [
    col('Last Seen', (o) => {
      const t = fieldAt(o, ['lastTimestamp'])
      return typeof t === 'string' ? humanDuration(Date.now() - Date.parse(t)) : age(o)
    }),
    col('Type', (o) => String(fieldAt(o, ['type']) ?? '')),
    col('Reason', (o) => String(fieldAt(o, ['reason']) ?? '')),
    col(
      'Object',
      (o) =>
        `${String(fieldAt(o, ['involvedObject', 'kind']) ?? '').toLowerCase()}/${String(fieldAt(o, ['involvedObject', 'name']) ?? '')}`,
    ),
    col('Message', (o) => String(fieldAt(o, ['message']) ?? '')),
  ],
}
