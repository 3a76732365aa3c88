/**
 * The workload controllers: Deployment → ReplicaSets (one per pod template, matched ignoring the
 * hash label, with `deployment.kubernetes.io/revision`), ReplicaSet → Pods, StatefulSet → ordinal
 * Pods with update/current revisions, DaemonSet → one Pod per node the template fits.
 */
import { clone, isObject, type JsonObject, type KubeObject } from '../../kube'
import type { Registry, Resource } from '../registry'
import { fieldAt } from '../strategies'
import { isRunning, newPod, nowIso, owned, ownerRef, recordEvent, resource, setStatus, templateHash, withoutLabel } from './common'
import { misfit } from './scheduling'

const REVISION = 'deployment.kubernetes.io/revision'
const POD_TEMPLATE_HASH = 'pod-template-hash'
const REVISION_HASH = 'controller-revision-hash'

const revisionOf = (rs: KubeObject) => Number(rs.metadata.annotations?.[REVISION] ?? 0)
const replicasOf = (obj: KubeObject, fallback = 1) => Number(fieldAt(obj, ['spec', 'replicas']) ?? fallback)

/**
 * One ReplicaSet per pod template: the one whose template equals the Deployment's (ignoring the
 * hash label and empty fields, so `kubectl rollout undo` finds the old one) is scaled to
 * spec.replicas and becomes the newest revision; all others go to 0.
 */
export function reconcileDeployment(reg: Registry, ns: string, name: string): void {
  const dr = resource(reg, 'apps', 'deployments')
  const rsr = resource(reg, 'apps', 'replicasets')
  let d = reg.get(dr, ns, name)
  if (d.metadata.deletionTimestamp) return
  const spec = d.spec as JsonObject
  const hash = templateHash(spec.template)
  const desired = replicasOf(d)
  const sets = owned(reg, rsr, ns, d)
  const newest = Math.max(0, ...sets.map(revisionOf))
  let current = sets.find((s) => templateHash(withoutLabel(fieldAt(s, ['spec', 'template']), POD_TEMPLATE_HASH)) === hash)
  // A paused Deployment rolls nothing out: the newest replica set stays current until it is resumed.
  if (!current && spec.paused === true) current = sets.find((s) => revisionOf(s) === newest)
  if (!current) {
    if (spec.paused === true) return
    current = createReplicaSet(reg, d, hash, newest + 1)
  } else if (revisionOf(current) < newest && spec.paused !== true) {
    current = reg.update(rsr, ns, current.metadata.name!, {
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [REVISION]: String(newest + 1) } },
    })
  }
  scaleReplicaSet(reg, d, current, desired)
  for (const old of sets) if (old.metadata.uid !== current.metadata.uid) scaleReplicaSet(reg, d, old, 0)
  const revision = current.metadata.annotations?.[REVISION] ?? '1'
  if (d.metadata.annotations?.[REVISION] !== revision)
    d = reg.update(dr, ns, name, { ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [REVISION]: revision } } })
  setStatus(reg, dr, d, deploymentStatus(reg, d, current.metadata.uid!, desired))
}

function createReplicaSet(reg: Registry, d: KubeObject, hash: string, revision: number): KubeObject {
  const spec = d.spec as JsonObject
  const template = clone(spec.template as JsonObject)
  const meta = isObject(template.metadata) ? template.metadata : (template.metadata = {})
  meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), [POD_TEMPLATE_HASH]: hash }
  const selector = isObject(spec.selector) ? spec.selector : {}
  const matchLabels = { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), [POD_TEMPLATE_HASH]: hash }
  return reg.create(resource(reg, 'apps', 'replicasets'), d.metadata.namespace!, {
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      labels: meta.labels as Record<string, string>,
      annotations: { [REVISION]: String(revision) },
      ownerReferences: [ownerRef(resource(reg, 'apps', 'deployments'), d)],
    },
    spec: { replicas: 0, selector: { ...selector, matchLabels }, template },
  })
}

function scaleReplicaSet(reg: Registry, d: KubeObject, rs: KubeObject, to: number): void {
  const from = replicasOf(rs, 0)
  if (from === to) return
  reg.update(resource(reg, 'apps', 'replicasets'), rs.metadata.namespace!, rs.metadata.name!, {
    ...rs,
    spec: { ...(rs.spec as JsonObject), replicas: to },
  })
  recordEvent(
    reg,
    resource(reg, 'apps', 'deployments'),
    d,
    'Normal',
    'ScalingReplicaSet',
    `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`,
    'deployment-controller',
  )
}

/** A condition that keeps its transition time while its status and reason stay the same. */
function condition(previous: Record<string, unknown>[], type: string, ok: boolean, reason: string, message: string): JsonObject {
  const before = previous.find((c) => c.type === type)
  const same = before?.status === (ok ? 'True' : 'False') && before.reason === reason
  const time = nowIso()
  return {
    type,
    status: ok ? 'True' : 'False',
    lastUpdateTime: same ? String(before.lastUpdateTime) : time,
    lastTransitionTime: same ? String(before.lastTransitionTime) : time,
    reason,
    message,
  }
}

const conditionsOf = (obj: KubeObject) =>
  isObject(obj.status) && Array.isArray(obj.status.conditions) ? obj.status.conditions.filter(isObject) : []

/** Sums the replica sets' counts. */
function deploymentStatus(reg: Registry, d: KubeObject, currentUid: string, desired: number): JsonObject {
  const all = owned(reg, resource(reg, 'apps', 'replicasets'), d.metadata.namespace!, d)
  const sum = (f: string) => all.reduce((n, s) => n + Number(fieldAt(s, ['status', f]) ?? 0), 0)
  const current = all.find((s) => s.metadata.uid === currentUid)
  const [replicas, available] = [sum('replicas'), sum('availableReplicas')]
  const previous = conditionsOf(d)
  const ready = available >= desired
  return {
    observedGeneration: d.metadata.generation ?? 1,
    replicas,
    updatedReplicas: Number(fieldAt(current, ['status', 'replicas']) ?? 0),
    readyReplicas: sum('readyReplicas'),
    availableReplicas: available,
    ...(replicas > available ? { unavailableReplicas: replicas - available } : {}),
    conditions: [
      condition(
        previous,
        'Available',
        ready,
        ready ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
        ready ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
      ),
      condition(
        previous,
        'Progressing',
        true,
        'NewReplicaSetAvailable',
        `ReplicaSet "${current?.metadata.name ?? ''}" has successfully progressed.`,
      ),
    ],
  }
}

export function reconcileReplicaSet(reg: Registry, ns: string, name: string): void {
  const rsr = resource(reg, 'apps', 'replicasets')
  const pr = resource(reg, '', 'pods')
  const rs = reg.get(rsr, ns, name)
  if (rs.metadata.deletionTimestamp) return
  const pods = owned(reg, pr, ns, rs).filter((p) => !p.metadata.deletionTimestamp)
  const desired = replicasOf(rs)
  for (let i = pods.length; i < desired; i++) {
    const pod = newPod(reg, rs, rsr, { generateName: `${name}-` })
    pods.push(pod)
    recordEvent(reg, rsr, rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'replicaset-controller')
  }
  const excess = pods
    .sort((a, b) => String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)))
    .slice(0, Math.max(0, pods.length - desired))
  for (const pod of excess) {
    reg.delete(pr, ns, pod.metadata.name!)
    recordEvent(reg, rsr, rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, 'replicaset-controller')
  }
  const live = pods.filter((p) => !excess.includes(p))
  const readyCount = live.filter((p) => isRunning(reg.get(pr, ns, p.metadata.name!))).length
  setStatus(reg, rsr, rs, {
    replicas: live.length,
    fullyLabeledReplicas: live.length,
    readyReplicas: readyCount,
    availableReplicas: readyCount,
    observedGeneration: rs.metadata.generation ?? 1,
  })
}

/**
 * Ordinal pods `<name>-0…`, each labelled with the revision (`<name>-<hash>`) of the template it was
 * made from. Under RollingUpdate, pods of an older revision are replaced; `currentRevision` catches
 * up with `updateRevision` once every pod runs the new one, which `kubectl rollout status` waits for.
 */
export function reconcileStatefulSet(reg: Registry, ns: string, name: string): void {
  const sr = resource(reg, 'apps', 'statefulsets')
  const pr = resource(reg, '', 'pods')
  const sts = reg.get(sr, ns, name)
  if (sts.metadata.deletionTimestamp) return
  const desired = replicasOf(sts)
  const updateRevision = `${name}-${templateHash(fieldAt(sts, ['spec', 'template']))}`
  const rolling = fieldAt(sts, ['spec', 'updateStrategy', 'type']) !== 'OnDelete'
  const pods = owned(reg, pr, ns, sts).filter((p) => !p.metadata.deletionTimestamp)
  for (const p of pods) {
    const index = Number(p.metadata.name!.slice(name.length + 1))
    const outdated = rolling && p.metadata.labels?.[REVISION_HASH] !== updateRevision
    if (index < desired && !outdated) continue
    reg.delete(pr, ns, p.metadata.name!)
    recordEvent(
      reg,
      sr,
      sts,
      'Normal',
      'SuccessfulDelete',
      `delete Pod ${p.metadata.name} in StatefulSet ${name} successful`,
      'statefulset-controller',
    )
  }
  const live = owned(reg, pr, ns, sts).filter((p) => !p.metadata.deletionTimestamp)
  for (let i = 0; i < desired; i++) {
    const podName = `${name}-${i}`
    if (owned(reg, pr, ns, sts).some((p) => p.metadata.name === podName)) continue
    live.push(
      newPod(
        reg,
        sts,
        sr,
        { name: podName },
        { 'statefulset.kubernetes.io/pod-name': podName, 'apps.kubernetes.io/pod-index': String(i), [REVISION_HASH]: updateRevision },
        { hostname: podName },
      ),
    )
    recordEvent(
      reg,
      sr,
      sts,
      'Normal',
      'SuccessfulCreate',
      `create Pod ${podName} in StatefulSet ${name} successful`,
      'statefulset-controller',
    )
  }
  recordRevision(reg, sts, sr, updateRevision, live)
  const updated = live.filter((p) => p.metadata.labels?.[REVISION_HASH] === updateRevision)
  const readyCount = live.filter(isRunning).length
  const previousCurrent = fieldAt(sts, ['status', 'currentRevision'])
  const currentRevision = updated.length === live.length || typeof previousCurrent !== 'string' ? updateRevision : previousCurrent
  setStatus(reg, sr, sts, {
    observedGeneration: sts.metadata.generation ?? 1,
    replicas: live.length,
    readyReplicas: readyCount,
    currentReplicas: live.filter((p) => p.metadata.labels?.[REVISION_HASH] === currentRevision).length,
    updatedReplicas: updated.length,
    availableReplicas: readyCount,
    currentRevision,
    updateRevision,
    collisionCount: 0,
  })
}

/**
 * The ControllerRevision of a template (`kubectl rollout history/undo` of stateful and daemon sets
 * read them): its data is the patch that restores the template. A template seen before becomes the
 * newest revision again; revisions beyond `revisionHistoryLimit` that no pod runs are deleted.
 */
function recordRevision(reg: Registry, owner: KubeObject, ownerResource: Resource, name: string, live: KubeObject[]): void {
  const crr = resource(reg, 'apps', 'controllerrevisions')
  const ns = owner.metadata.namespace!
  const revisions = owned(reg, crr, ns, owner)
  const newest = Math.max(0, ...revisions.map((r) => Number(r.revision ?? 0)))
  const existing = revisions.find((r) => r.metadata.name === name)
  if (!existing) {
    const template = clone(fieldAt(owner, ['spec', 'template']) as JsonObject)
    const labels = fieldAt(template, ['metadata', 'labels'])
    reg.create(crr, ns, {
      metadata: {
        name,
        labels: { ...(isObject(labels) ? (labels as Record<string, string>) : {}), [REVISION_HASH]: name.slice(name.lastIndexOf('-') + 1) },
        ownerReferences: [ownerRef(ownerResource, owner)],
      },
      data: { spec: { template: { ...template, $patch: 'replace' } } },
      revision: newest + 1,
    })
  } else if (Number(existing.revision) < newest) reg.update(crr, ns, name, { ...existing, revision: newest + 1 })
  const inUse = new Set(live.map((p) => p.metadata.labels?.[REVISION_HASH]))
  const old = owned(reg, crr, ns, owner)
    .filter(
      (r) =>
        r.metadata.name !== name &&
        !inUse.has(r.metadata.name) &&
        !inUse.has(r.metadata.name!.slice(r.metadata.name!.lastIndexOf('-') + 1)),
    )
    .sort((a, b) => Number(a.revision) - Number(b.revision))
  const limit = Number(fieldAt(owner, ['spec', 'revisionHistoryLimit']) ?? 10)
  for (const r of old.slice(0, Math.max(0, old.length - limit))) reg.delete(crr, ns, r.metadata.name!)
}

/** What every DaemonSet pod tolerates, as the daemon set controller adds it. */
const DAEMON_TOLERATIONS = [
  ['node.kubernetes.io/not-ready', 'NoExecute'],
  ['node.kubernetes.io/unreachable', 'NoExecute'],
  ['node.kubernetes.io/disk-pressure', 'NoSchedule'],
  ['node.kubernetes.io/memory-pressure', 'NoSchedule'],
  ['node.kubernetes.io/pid-pressure', 'NoSchedule'],
  ['node.kubernetes.io/unschedulable', 'NoSchedule'],
].map(([key, effect]) => ({ key, operator: 'Exists', effect }))

const pinnedNode = (pod: KubeObject) => {
  const terms = fieldAt(pod, ['spec', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'])
  const field = Array.isArray(terms) && isObject(terms[0]) && Array.isArray(terms[0].matchFields) ? terms[0].matchFields[0] : undefined
  return String(fieldAt(pod, ['spec', 'nodeName']) || (isObject(field) && Array.isArray(field.values) ? field.values[0] : ''))
}

/** One pod per node the template fits, pinned by node affinity on `metadata.name` as the real controller does. */
export function reconcileDaemonSet(reg: Registry, ns: string, name: string): void {
  const dsr = resource(reg, 'apps', 'daemonsets')
  const pr = resource(reg, '', 'pods')
  const ds = reg.get(dsr, ns, name)
  if (ds.metadata.deletionTimestamp) return
  const revision = templateHash(fieldAt(ds, ['spec', 'template']))
  const template = fieldAt(ds, ['spec', 'template', 'spec'])
  const tolerations = [
    ...(Array.isArray(fieldAt(template, ['tolerations'])) ? (fieldAt(template, ['tolerations']) as unknown[]) : []),
    ...DAEMON_TOLERATIONS,
  ]
  const probe = { metadata: {}, spec: { ...(isObject(template) ? template : {}), tolerations } } as KubeObject
  const wanted = reg
    .list(resource(reg, '', 'nodes'), '')
    .items.filter((n) => misfit(probe, n) === undefined)
    .map((n) => n.metadata.name!)
  const pods = owned(reg, pr, ns, ds).filter((p) => !p.metadata.deletionTimestamp)
  for (const p of pods) {
    if (wanted.includes(pinnedNode(p)) && p.metadata.labels?.[REVISION_HASH] === revision) continue
    reg.delete(pr, ns, p.metadata.name!)
    recordEvent(reg, dsr, ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`, 'daemonset-controller')
  }
  const live = owned(reg, pr, ns, ds).filter((p) => !p.metadata.deletionTimestamp)
  for (const node of wanted) {
    if (live.some((p) => pinnedNode(p) === node)) continue
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
    }
    const pod = newPod(reg, ds, dsr, { generateName: `${name}-` }, { [REVISION_HASH]: revision }, { affinity, tolerations } as JsonObject)
    live.push(pod)
    recordEvent(reg, dsr, ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'daemonset-controller')
  }
  recordRevision(reg, ds, dsr, `${name}-${revision}`, live)
  const readyCount = live.filter(isRunning).length
  setStatus(reg, dsr, ds, {
    observedGeneration: ds.metadata.generation ?? 1,
    desiredNumberScheduled: wanted.length,
    currentNumberScheduled: live.length,
    numberReady: readyCount,
    numberAvailable: readyCount,
    updatedNumberScheduled: live.length,
    numberMisscheduled: 0,
    ...(wanted.length > readyCount ? { numberUnavailable: wanted.length - readyCount } : {}),
  })
}
