/**
 * Just enough control plane for the emulator to look alive: a deployment controller (ReplicaSets
 * owned with `controller: true`), replica set and stateful set controllers (Pods), a "kubelet" that
 * schedules and starts pods, garbage collection of dependents, CRD registration, and Events for
 * what they do. Reconciles run on a queue after the triggering write has answered.
 */
import { groupResource, randomSuffix, type Registry, type Resource, type StoreEvent } from './registry'
import { fieldAt, strategyFromCrd } from './strategies'
import { clone, isObject, type JsonObject, type KubeObject, type OwnerReference } from '../kube'

type Reconcile = () => void

const ownerRef = (r: Resource, obj: KubeObject): OwnerReference => ({
  apiVersion: r.group ? `${r.group}/${r.versions[0]}` : r.versions[0], kind: r.strategy.kind,
  name: obj.metadata.name!, uid: obj.metadata.uid!, controller: true, blockOwnerDeletion: true,
})
const controllerOf = (obj: KubeObject) => obj.metadata.ownerReferences?.find((o) => o.controller === true)
const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

let eventSequence = 0n
/** Event names end in a hex timestamp, as the apiserver's recorder makes them, so name order is time order. */
const eventSuffix = () => (BigInt(Date.now()) * 1_000_000n + (eventSequence++ % 1_000_000n)).toString(16)

/** Records a core/v1 Event about `obj` (cluster-scoped objects get theirs in `default`). */
export function recordEvent(reg: Registry, r: Resource, obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, component: string): void {
  const events = reg.lookup('', 'v1', 'events')
  if (!events) return
  const ns = obj.metadata.namespace || 'default'
  const time = nowIso()
  try {
    reg.create(events, ns, {
      metadata: { name: `${obj.metadata.name}.${eventSuffix()}`, namespace: ns },
      involvedObject: { apiVersion: r.group ? `${r.group}/${r.versions[0]}` : r.versions[0], kind: r.strategy.kind, name: obj.metadata.name,
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}), uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
      reason, message, type, count: 1, firstTimestamp: time, lastTimestamp: time, eventTime: null,
      source: { component }, reportingComponent: component, reportingInstance: '',
    })
  } catch { /* the namespace may be going away; losing an event is harmless */ }
}

/** The pod-template-hash: stable for a template, in the generateName alphabet. */
function templateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789'
  let n = BigInt(Bun.hash(JSON.stringify(template ?? {})))
  let out = ''
  for (let i = 0; i < 10; i++) { out += alphabet[Number(n % 27n)]; n /= 27n }
  return out
}

/** Objects of `r` in `ns` whose controller reference is `owner`. */
function owned(reg: Registry, r: Resource, ns: string, owner: KubeObject): KubeObject[] {
  return reg.list(r, ns).items.filter((o) => controllerOf(o)?.uid === owner.metadata.uid)
}

const ready = (pod: KubeObject) => fieldAt(pod, ['status', 'phase']) === 'Running' && !pod.metadata.deletionTimestamp

/** The controllers of one emulator, fed by the registry's change events. */
export class Controllers {
  private readonly queue = new Map<string, Reconcile>()
  private scheduled = false
  private readonly unsubscribe: () => void
  private nodeCursor = 0
  private podIp = 10

  constructor(private readonly reg: Registry) {
    this.unsubscribe = reg.subscribe((e) => this.observe(e))
  }

  stop(): void { this.unsubscribe(); this.queue.clear() }

  /** Resolves once no reconcile is queued (used after seeding, so pods exist before the first request). */
  async settled(): Promise<void> {
    while (this.scheduled || this.queue.size) await Bun.sleep(1)
  }

  private res(group: string, resource: string): Resource {
    return this.reg.all().find((r) => r.group === group && r.resource === resource)!
  }

  private enqueue(key: string, fn: Reconcile): void {
    this.queue.set(key, fn)
    if (this.scheduled) return
    this.scheduled = true
    setTimeout(() => this.drain(), 0)
  }

  /** Runs one batch; work the batch enqueues runs on a later tick, so requests are served in between. */
  private drain(): void {
    this.scheduled = false
    const batch = [...this.queue.values()]
    this.queue.clear()
    for (const fn of batch) {
      try { fn() } catch { /* the object changed or went away meanwhile; its next event reconciles again */ }
    }
  }

  private observe(e: StoreEvent): void {
    const { group, resource } = groupResource(e.resource)
    const obj = e.object
    const ns = obj.metadata.namespace ?? ''
    const name = obj.metadata.name!
    if (group === 'apiextensions.k8s.io' && resource === 'customresourcedefinitions') this.observeCrd(e)
    if (e.type === 'DELETED') {
      this.enqueue(`gc/${obj.metadata.uid}`, () => this.collectDependents(obj))
      if (group === '' && resource === 'namespaces') this.enqueue(`ns/${name}`, () => this.emptyNamespace(name))
    }
    const owner = controllerOf(obj)
    if (owner?.kind === 'ReplicaSet') this.enqueue(`rs/${ns}/${owner.name}`, () => this.reconcileReplicaSet(ns, owner.name))
    if (owner?.kind === 'StatefulSet') this.enqueue(`sts/${ns}/${owner.name}`, () => this.reconcileStatefulSet(ns, owner.name))
    if (owner?.kind === 'Deployment') this.enqueue(`deploy/${ns}/${owner.name}`, () => this.reconcileDeployment(ns, owner.name))
    if (e.type === 'DELETED') return
    if (group === '' && resource === 'namespaces' && e.type === 'ADDED') this.enqueue(`sa/${name}`, () => this.createDefaultServiceAccount(name))
    if (group === 'apps' && resource === 'deployments') this.enqueue(`deploy/${ns}/${name}`, () => this.reconcileDeployment(ns, name))
    if (group === 'apps' && resource === 'replicasets') this.enqueue(`rs/${ns}/${name}`, () => this.reconcileReplicaSet(ns, name))
    if (group === 'apps' && resource === 'statefulsets') this.enqueue(`sts/${ns}/${name}`, () => this.reconcileStatefulSet(ns, name))
    if (group === '' && resource === 'pods' && fieldAt(obj, ['status', 'phase']) === 'Pending') this.enqueue(`kubelet/${ns}/${name}`, () => this.startPod(ns, name))
    // A node added or uncordoned may take the pods that found no schedulable node.
    if (group === '' && resource === 'nodes' && fieldAt(obj, ['spec', 'unschedulable']) !== true)
      for (const pod of this.reg.list(this.res('', 'pods'), '').items)
        if (fieldAt(pod, ['status', 'phase']) === 'Pending' && !fieldAt(pod, ['spec', 'nodeName'])) {
          const [podNs, podName] = [pod.metadata.namespace ?? '', pod.metadata.name!]
          this.enqueue(`kubelet/${podNs}/${podName}`, () => this.startPod(podNs, podName))
        }
  }

  /** CRDs are served from the moment they are stored, so a create followed by a use works at once. */
  private observeCrd(e: StoreEvent): void {
    const unregister = (crd: KubeObject) => {
      const spec = crd.spec as JsonObject
      this.reg.unregister(String(spec.group), String((spec.names as JsonObject).plural))
    }
    if (e.type === 'DELETED') return unregister(e.object)
    const crd = strategyFromCrd(e.object)
    // A renamed plural leaves the old path behind unless it is dropped here.
    if (e.previous && fieldAt(e.previous, ['spec', 'names', 'plural']) !== crd.resource) unregister(e.previous)
    this.reg.register(crd)
    const name = e.object.metadata.name!
    this.enqueue(`crd/${name}`, () => this.establishCrd(name))
  }

  private establishCrd(name: string): void {
    const r = this.res('apiextensions.k8s.io', 'customresourcedefinitions')
    const crd = this.reg.get(r, '', name)
    const spec = crd.spec as JsonObject
    const time = nowIso()
    const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', lastTransitionTime: time, reason, message })
    if (fieldAt(crd, ['status', 'acceptedNames', 'plural']) === fieldAt(spec, ['names', 'plural'])) return
    this.reg.update(r, '', name, { ...crd, status: {
      conditions: [condition('NamesAccepted', 'NoConflicts', 'no conflicts found'), condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
      acceptedNames: spec.names, storedVersions: (spec.versions as JsonObject[]).filter((v) => v.storage === true).map((v) => v.name),
    } }, { subresource: 'status' })
  }

  /** Background propagation: dependents of a deleted owner are deleted in turn. */
  private collectDependents(owner: KubeObject): void {
    for (const { resource, object } of this.reg.dependentsOf(owner.metadata.uid!)) {
      const remaining = object.metadata.ownerReferences!.filter((o) => o.uid !== owner.metadata.uid)
      if (remaining.length) this.reg.update(resource, object.metadata.namespace ?? '', object.metadata.name!, { ...object, metadata: { ...object.metadata, ownerReferences: remaining } })
      else this.reg.delete(resource, object.metadata.namespace ?? '', object.metadata.name!)
    }
  }

  /** Every namespace gets a `default` ServiceAccount, as the serviceaccount controller ensures. */
  private createDefaultServiceAccount(ns: string): void {
    const sa = this.res('', 'serviceaccounts')
    if (!this.reg.list(sa, ns).items.some((o) => o.metadata.name === 'default')) this.reg.create(sa, ns, { metadata: { name: 'default' } })
  }

  private emptyNamespace(ns: string): void {
    for (const r of this.reg.all()) {
      if (r.virtual || !r.strategy.namespaced) continue
      for (const o of this.reg.list(r, ns).items) this.reg.delete(r, ns, o.metadata.name!)
    }
  }

  /** One ReplicaSet per pod template: the current one scaled to spec.replicas, older ones to 0. */
  private reconcileDeployment(ns: string, name: string): void {
    const dr = this.res('apps', 'deployments')
    const rsr = this.res('apps', 'replicasets')
    const d = this.reg.get(dr, ns, name)
    if (d.metadata.deletionTimestamp) return
    const spec = d.spec as JsonObject
    const hash = templateHash(spec.template)
    const desired = Number(spec.replicas ?? 1)
    const sets = owned(this.reg, rsr, ns, d)
    const current = sets.find((s) => s.metadata.labels?.['pod-template-hash'] === hash) ?? this.createReplicaSet(d, hash, sets.length + 1)
    this.scaleReplicaSet(d, current, desired)
    for (const old of sets) if (old.metadata.uid !== current.metadata.uid) this.scaleReplicaSet(d, old, 0)
    this.reg.update(dr, ns, name, { ...d, status: this.deploymentStatus(d, current.metadata.uid!, desired) }, { subresource: 'status' })
  }

  private createReplicaSet(d: KubeObject, hash: string, revision: number): KubeObject {
    const spec = d.spec as JsonObject
    const template = clone(spec.template as JsonObject)
    const meta = isObject(template.metadata) ? template.metadata : (template.metadata = {})
    meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), 'pod-template-hash': hash }
    const selector = isObject(spec.selector) ? spec.selector : {}
    const matchLabels = { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), 'pod-template-hash': hash }
    return this.reg.create(this.res('apps', 'replicasets'), d.metadata.namespace!, {
      metadata: { name: `${d.metadata.name}-${hash}`, labels: meta.labels as Record<string, string>,
        annotations: { 'deployment.kubernetes.io/revision': String(revision) },
        ownerReferences: [ownerRef(this.res('apps', 'deployments'), d)] },
      spec: { replicas: 0, selector: { ...selector, matchLabels }, template },
    })
  }

  private scaleReplicaSet(d: KubeObject, rs: KubeObject, to: number): void {
    const from = Number(fieldAt(rs, ['spec', 'replicas']) ?? 0)
    if (from === to) return
    this.reg.update(this.res('apps', 'replicasets'), rs.metadata.namespace!, rs.metadata.name!, { ...rs, spec: { ...(rs.spec as JsonObject), replicas: to } })
    recordEvent(this.reg, this.res('apps', 'deployments'), d, 'Normal', 'ScalingReplicaSet',
      `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`, 'deployment-controller')
  }

  /** Sums the replica sets' counts; conditions keep their transition times while unchanged. */
  private deploymentStatus(d: KubeObject, currentUid: string, desired: number): JsonObject {
    const all = owned(this.reg, this.res('apps', 'replicasets'), d.metadata.namespace!, d)
    const sum = (f: string) => all.reduce((n, s) => n + Number(fieldAt(s, ['status', f]) ?? 0), 0)
    const current = all.find((s) => s.metadata.uid === currentUid)
    const [replicas, available] = [sum('replicas'), sum('availableReplicas')]
    const time = nowIso()
    const previous = isObject(d.status) && Array.isArray(d.status.conditions) ? d.status.conditions.filter(isObject) : []
    const condition = (type: string, ok: boolean, reason: string, message: string) => {
      const before = previous.find((c) => c.type === type)
      const same = before?.status === (ok ? 'True' : 'False') && before.reason === reason
      const since = same ? String(before.lastTransitionTime) : time
      return { type, status: ok ? 'True' : 'False', lastUpdateTime: same ? String(before.lastUpdateTime) : time, lastTransitionTime: since, reason, message }
    }
    const ready = available >= desired
    return {
      observedGeneration: d.metadata.generation ?? 1, replicas, updatedReplicas: Number(fieldAt(current, ['status', 'replicas']) ?? 0),
      readyReplicas: sum('readyReplicas'), availableReplicas: available, ...(replicas > available ? { unavailableReplicas: replicas - available } : {}),
      conditions: [
        condition('Available', ready, ready ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          ready ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.'),
        condition('Progressing', true, 'NewReplicaSetAvailable', `ReplicaSet "${current?.metadata.name ?? ''}" has successfully progressed.`),
      ],
    }
  }

  private newPod(owner: KubeObject, ownerResource: Resource, name: { name?: string; generateName?: string }, extraLabels: Record<string, string> = {}): KubeObject {
    const template = clone(fieldAt(owner, ['spec', 'template']) as JsonObject)
    const meta = isObject(template.metadata) ? template.metadata : {}
    return this.reg.create(this.res('', 'pods'), owner.metadata.namespace!, {
      metadata: { ...name, namespace: owner.metadata.namespace, labels: { ...(meta.labels as Record<string, string> | undefined), ...extraLabels },
        ...(isObject(meta.annotations) ? { annotations: meta.annotations as Record<string, string> } : {}), ownerReferences: [ownerRef(ownerResource, owner)] },
      spec: template.spec,
    })
  }

  private reconcileReplicaSet(ns: string, name: string): void {
    const rsr = this.res('apps', 'replicasets')
    const pr = this.res('', 'pods')
    const rs = this.reg.get(rsr, ns, name)
    if (rs.metadata.deletionTimestamp) return
    const pods = owned(this.reg, pr, ns, rs).filter((p) => !p.metadata.deletionTimestamp)
    const desired = Number(fieldAt(rs, ['spec', 'replicas']) ?? 1)
    for (let i = pods.length; i < desired; i++) {
      const pod = this.newPod(rs, rsr, { generateName: `${name}-` })
      pods.push(pod)
      recordEvent(this.reg, rsr, rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'replicaset-controller')
    }
    const excess = pods.sort((a, b) => String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp))).slice(0, Math.max(0, pods.length - desired))
    for (const pod of excess) {
      this.reg.delete(pr, ns, pod.metadata.name!)
      recordEvent(this.reg, rsr, rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, 'replicaset-controller')
    }
    const live = pods.filter((p) => !excess.includes(p))
    const readyCount = live.filter((p) => ready(this.reg.get(pr, ns, p.metadata.name!))).length
    this.reg.update(rsr, ns, name, { ...rs, status: {
      replicas: live.length, fullyLabeledReplicas: live.length, readyReplicas: readyCount, availableReplicas: readyCount, observedGeneration: rs.metadata.generation,
    } }, { subresource: 'status' })
  }

  private reconcileStatefulSet(ns: string, name: string): void {
    const sr = this.res('apps', 'statefulsets')
    const pr = this.res('', 'pods')
    const sts = this.reg.get(sr, ns, name)
    if (sts.metadata.deletionTimestamp) return
    const desired = Number(fieldAt(sts, ['spec', 'replicas']) ?? 1)
    const pods = owned(this.reg, pr, ns, sts)
    for (let i = 0; i < desired; i++) {
      const podName = `${name}-${i}`
      if (pods.some((p) => p.metadata.name === podName)) continue
      pods.push(this.newPod(sts, sr, { name: podName }, { 'statefulset.kubernetes.io/pod-name': podName, 'apps.kubernetes.io/pod-index': String(i) }))
      recordEvent(this.reg, sr, sts, 'Normal', 'SuccessfulCreate', `create Pod ${podName} in StatefulSet ${name} successful`, 'statefulset-controller')
    }
    for (const p of pods) {
      const index = Number(p.metadata.name!.slice(name.length + 1))
      if (index < desired) continue
      this.reg.delete(pr, ns, p.metadata.name!)
      recordEvent(this.reg, sr, sts, 'Normal', 'SuccessfulDelete', `delete Pod ${p.metadata.name} in StatefulSet ${name} successful`, 'statefulset-controller')
    }
    const live = owned(this.reg, pr, ns, sts)
    const readyCount = live.filter(ready).length
    this.reg.update(sr, ns, name, { ...sts, status: {
      observedGeneration: sts.metadata.generation, replicas: live.length, readyReplicas: readyCount, currentReplicas: live.length,
      updatedReplicas: live.length, availableReplicas: readyCount, collisionCount: 0,
    } }, { subresource: 'status' })
  }

  /** The scheduler and kubelet in one: bind to a node, then report every container running and ready. */
  private startPod(ns: string, name: string): void {
    const pr = this.res('', 'pods')
    const nodes = this.reg.list(this.res('', 'nodes'), '').items
    let pod = this.reg.get(pr, ns, name)
    if (fieldAt(pod, ['status', 'phase']) !== 'Pending' || pod.metadata.deletionTimestamp || !nodes.length) return
    const spec = pod.spec as JsonObject
    let nodeName = typeof spec.nodeName === 'string' ? spec.nodeName : ''
    if (!nodeName) {
      // Cordoned nodes (kubectl cordon, drain) take no new pods; with none left the pod stays Pending.
      const schedulable = nodes.filter((n) => fieldAt(n, ['spec', 'unschedulable']) !== true)
      if (!schedulable.length) return
      nodeName = schedulable[this.nodeCursor++ % schedulable.length].metadata.name!
      pod = this.reg.update(pr, ns, name, { ...pod, spec: { ...spec, nodeName } })
      recordEvent(this.reg, pr, pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${nodeName}`, 'default-scheduler')
    }
    const node = nodes.find((n) => n.metadata.name === nodeName)
    const hostIP = String((fieldAt(node, ['status', 'addresses']) as JsonObject[] | undefined)?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.10')
    const time = nowIso()
    const containers = (Array.isArray(spec.containers) ? (spec.containers as unknown[]) : []).filter(isObject)
    for (const c of containers) {
      recordEvent(this.reg, pr, pod, 'Normal', 'Pulled', `Container image "${String(c.image)}" already present on machine`, 'kubelet')
      recordEvent(this.reg, pr, pod, 'Normal', 'Created', `Created container: ${String(c.name)}`, 'kubelet')
      recordEvent(this.reg, pr, pod, 'Normal', 'Started', `Started container ${String(c.name)}`, 'kubelet')
    }
    const qosClass = fieldAt(pod, ['status', 'qosClass']) ?? 'BestEffort'
    const ip = this.podIp++
    const podIP = `10.244.${(ip >> 8) & 0xff}.${ip & 0xff}`
    const condition = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: time })
    this.reg.update(pr, ns, name, { ...pod, status: {
      phase: 'Running', hostIP, hostIPs: [{ ip: hostIP }], podIP, podIPs: [{ ip: podIP }], startTime: time, qosClass,
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
      containerStatuses: containers.map((c) => ({
        name: c.name, image: c.image, imageID: `${String(c.image).includes('/') ? '' : 'docker.io/library/'}${String(c.image).split(':')[0]}@sha256:${Bun.hash(String(c.image)).toString(16).padStart(16, '0').repeat(4)}`,
        containerID: `containerd://${randomSuffix(8)}${Bun.hash(`${name}/${String(c.name)}`).toString(16)}`, ready: true, started: true, restartCount: 0,
        state: { running: { startedAt: time } },
      })),
    } }, { subresource: 'status' })
  }
}
