/**
 * What follows the pods a selector picks: Endpoints and EndpointSlices for Services (the running
 * pods that match, with the service's target ports) and PodDisruptionBudget status; and a volume
 * binder that binds every PersistentVolumeClaim at once.
 */
import { isObject, type JsonObject, type KubeObject } from '../../kube'
import type { Registry } from '../registry'
import { type LabelRequirement, matchesLabels } from '../selectors'
import { fieldAt } from '../strategies'
import { isRunning, nowIso, ownerRef, resource, setStatus } from './common'

const SERVICE_NAME = 'kubernetes.io/service-name'

/** Creates, replaces or deletes (undefined) the object `name` of `r` so it equals `desired`. */
function upsert(reg: Registry, group: string, plural: string, ns: string, name: string, desired: KubeObject | undefined): void {
  const r = resource(reg, group, plural)
  const existing = reg.list(r, ns, { fields: [{ field: 'metadata.name', op: '=', value: name }] }).items[0]
  if (!desired) {
    if (existing) reg.delete(r, ns, name)
    return
  }
  if (!existing) reg.create(r, ns, desired)
  else reg.update(r, ns, name, { ...desired, metadata: { ...existing.metadata, ...desired.metadata } })
}

/** A service port's target as a number: a named targetPort is looked up in the pod's containers. */
function targetPort(port: Record<string, unknown>, pod: KubeObject): number {
  const target = port.targetPort ?? port.port
  if (typeof target === 'number') return target
  const containers = fieldAt(pod, ['spec', 'containers'])
  for (const c of Array.isArray(containers) ? containers.filter(isObject) : [])
    for (const p of Array.isArray(c.ports) ? c.ports.filter(isObject) : []) if (p.name === target) return Number(p.containerPort)
  return Number(port.port)
}

export function reconcileEndpoints(reg: Registry, ns: string, name: string): void {
  const sr = resource(reg, '', 'services')
  const svc = reg.list(sr, ns, { fields: [{ field: 'metadata.name', op: '=', value: name }] }).items[0]
  const selector = fieldAt(svc, ['spec', 'selector'])
  if (!svc) return upsert(reg, '', 'endpoints', ns, name, undefined)
  if (!isObject(selector) || !Object.keys(selector).length) return
  const requirements = Object.entries(selector).map(([key, v]) => ({ key, op: '=' as const, values: [String(v)] }))
  const pods = reg
    .list(resource(reg, '', 'pods'), ns)
    .items.filter((p) => isRunning(p) && fieldAt(p, ['status', 'podIP']) && matchesLabels(requirements, p.metadata.labels))
  const ports = (Array.isArray(fieldAt(svc, ['spec', 'ports'])) ? (fieldAt(svc, ['spec', 'ports']) as unknown[]) : []).filter(isObject)
  const portsFor = (pod: KubeObject | undefined) =>
    ports.map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: pod ? targetPort(p, pod) : Number(p.port),
      protocol: p.protocol ?? 'TCP',
    })) as unknown as JsonObject[]
  const targetRef = (p: KubeObject) => ({ kind: 'Pod', namespace: ns, name: p.metadata.name!, uid: p.metadata.uid! })
  upsert(reg, '', 'endpoints', ns, name, {
    metadata: { name, namespace: ns, labels: { ...svc.metadata.labels } },
    ...(pods.length
      ? {
          subsets: [
            {
              addresses: pods.map((p) => ({
                ip: String(fieldAt(p, ['status', 'podIP'])),
                nodeName: String(fieldAt(p, ['spec', 'nodeName']) ?? ''),
                targetRef: targetRef(p),
              })),
              ports: portsFor(pods[0]),
            },
          ],
        }
      : {}),
  })
  const slices = resource(reg, 'discovery.k8s.io', 'endpointslices')
  const slice = reg.list(slices, ns).items.find((s) => s.metadata.labels?.[SERVICE_NAME] === name)
  const body: KubeObject = {
    metadata: {
      ...(slice ? { name: slice.metadata.name } : { generateName: `${name}-` }),
      namespace: ns,
      labels: { ...svc.metadata.labels, [SERVICE_NAME]: name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      ownerReferences: [ownerRef(sr, svc)],
    },
    addressType: 'IPv4',
    endpoints: pods.map((p) => ({
      addresses: [String(fieldAt(p, ['status', 'podIP']))],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: String(fieldAt(p, ['spec', 'nodeName']) ?? ''),
      targetRef: targetRef(p),
    })),
    ports: portsFor(pods[0]),
  }
  if (slice) reg.update(slices, ns, slice.metadata.name!, { ...body, metadata: { ...slice.metadata, ...body.metadata } })
  else reg.create(slices, ns, body)
}

/** Binds a pending claim to a volume named after it, with the capacity it asked for. */
export function bindClaim(reg: Registry, ns: string, name: string): void {
  const r = resource(reg, '', 'persistentvolumeclaims')
  let pvc = reg.get(r, ns, name)
  if (fieldAt(pvc, ['status', 'phase']) !== 'Pending' || pvc.metadata.deletionTimestamp) return
  if (!fieldAt(pvc, ['spec', 'volumeName']))
    pvc = reg.update(r, ns, name, { ...pvc, spec: { ...(pvc.spec as JsonObject), volumeName: `pvc-${pvc.metadata.uid}` } })
  setStatus(reg, r, pvc, {
    phase: 'Bound',
    accessModes: fieldAt(pvc, ['spec', 'accessModes']) as JsonObject[],
    capacity: { storage: String(fieldAt(pvc, ['spec', 'resources', 'requests', 'storage']) ?? '') },
  })
}

/** A `matchLabels`/`matchExpressions` selector as label requirements; undefined for a missing selector. */
function requirementsOf(sel: unknown): LabelRequirement[] | undefined {
  if (!isObject(sel)) return undefined
  const reqs: LabelRequirement[] = Object.entries(isObject(sel.matchLabels) ? sel.matchLabels : {}).map(([key, v]) => ({
    key,
    op: '=',
    values: [String(v)],
  }))
  const ops: Record<string, LabelRequirement['op']> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' }
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions.filter(isObject) : [])
    if (ops[String(e.operator)])
      reqs.push({ key: String(e.key), op: ops[String(e.operator)], values: Array.isArray(e.values) ? e.values.map(String) : [] })
  return reqs
}

/** An int-or-percent of `total` (percentages round up, as the disruption controller does for minAvailable). */
const scaled = (v: unknown, total: number) =>
  typeof v === 'string' && v.endsWith('%') ? Math.ceil((Number(v.slice(0, -1)) * total) / 100) : Number(v)

/** How many of the budget's pods are healthy and how many may be disrupted now. */
export function reconcileDisruptionBudget(reg: Registry, ns: string, name: string): void {
  const r = resource(reg, 'policy', 'poddisruptionbudgets')
  const pdb = reg.get(r, ns, name)
  const reqs = requirementsOf(fieldAt(pdb, ['spec', 'selector']))
  const pods = reqs
    ? reg.list(resource(reg, '', 'pods'), ns).items.filter((p) => !p.metadata.deletionTimestamp && matchesLabels(reqs, p.metadata.labels))
    : []
  const healthy = pods.filter(isRunning).length
  const min = fieldAt(pdb, ['spec', 'minAvailable'])
  const maxUnavailable = fieldAt(pdb, ['spec', 'maxUnavailable'])
  const desired =
    min !== undefined
      ? scaled(min, pods.length)
      : maxUnavailable !== undefined
        ? Math.max(0, pods.length - scaled(maxUnavailable, pods.length))
        : pods.length
  const allowed = Math.max(0, healthy - desired)
  const previous = (Array.isArray(fieldAt(pdb, ['status', 'conditions'])) ? (fieldAt(pdb, ['status', 'conditions']) as unknown[]) : [])
    .filter(isObject)
    .find((c) => c.type === 'DisruptionAllowed')
  const status = allowed > 0 ? 'True' : 'False'
  setStatus(reg, r, pdb, {
    observedGeneration: pdb.metadata.generation ?? 1,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: pods.length,
    disruptionsAllowed: allowed,
    conditions: [
      {
        type: 'DisruptionAllowed',
        status,
        reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
        message: '',
        observedGeneration: pdb.metadata.generation ?? 1,
        lastTransitionTime: previous?.status === status ? String(previous.lastTransitionTime) : nowIso(),
      },
    ],
  })
}

/**
 * How pods of `ns` reach Services by name, for the shell's wget and curl: `svc`, `svc.ns`,
 * `svc.ns.svc[.cluster.local]` resolve to the cluster IP when the Service has the port and a ready endpoint.
 */
export function serviceResolver(reg: Registry, ns: string): (host: string, port: number) => string | undefined {
  return (host, port) => {
    const [name, namespace = ns, ...rest] = host.replace(/\.svc(\.cluster\.local)?$/, '').split('.')
    if (rest.length) return undefined
    const byName = (r: string) =>
      reg.list(resource(reg, '', r), namespace, { fields: [{ field: 'metadata.name', op: '=', value: name }] }).items[0]
    const svc = byName('services')
    const ports = fieldAt(svc, ['spec', 'ports'])
    if (!svc || !Array.isArray(ports) || !ports.some((p) => isObject(p) && p.port === port)) return undefined
    const subsets = fieldAt(byName('endpoints'), ['subsets'])
    return Array.isArray(subsets) && subsets.length ? String(fieldAt(svc, ['spec', 'clusterIP'])) : undefined
  }
}
