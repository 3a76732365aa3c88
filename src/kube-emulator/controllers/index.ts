/**
 * Just enough control plane for the emulator to look alive: the workload controllers (Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, Job), a scheduler/kubelet, Endpoints and EndpointSlices,
 * claim binding, garbage collection of dependents, namespace cleanup, CRD registration, and Events
 * for what they do. Reconciles run on a queue after the triggering write has answered.
 */
import type { JsonObject, KubeObject } from '../../kube'
import type { ContainerOutputs } from '../container-output'
import type { ContainerFilesystems } from '../filesystem'
import { groupResource, type Registry, type StoreEvent, withoutOwner } from '../registry'
import { fieldAt, strategyFromCrd } from '../strategies'
import { controllerOf, nowIso, resource } from './common'
import { reconcileCronJob, reconcileJob } from './jobs'
import { Kubelet } from './kubelet'
import { bindClaim, reconcileDisruptionBudget, reconcileEndpoints } from './services'
import { reconcileDaemonSet, reconcileDeployment, reconcileReplicaSet, reconcileStatefulSet } from './workloads'

type Reconcile = () => void

/** The reconcile of each owning kind, keyed by Kind (for owner references) and by group/resource (for its own events). */
const OWNERS: Record<string, { key: string; reconcile: (reg: Registry, ns: string, name: string) => void }> = {
  Deployment: { key: 'apps/deployments', reconcile: reconcileDeployment },
  ReplicaSet: { key: 'apps/replicasets', reconcile: reconcileReplicaSet },
  StatefulSet: { key: 'apps/statefulsets', reconcile: reconcileStatefulSet },
  DaemonSet: { key: 'apps/daemonsets', reconcile: reconcileDaemonSet },
  Job: { key: 'batch/jobs', reconcile: reconcileJob },
}

export interface ControllerOptions {
  /** The time CronJob schedules are read against. */
  now: () => number
  /** How often CronJobs are checked for a due schedule. */
  cronIntervalMs: number
}

/** The controllers of one emulator, fed by the registry's change events. */
export class Controllers {
  private readonly queue = new Map<string, Reconcile>()
  private scheduled = false
  /** Callers of `settled` waiting for the queue to empty. */
  private idleWaiters: (() => void)[] = []
  private readonly unsubscribe: () => void
  private readonly kubelet: Kubelet
  private readonly cronTimer: ReturnType<typeof setInterval>

  constructor(
    private readonly reg: Registry,
    private readonly outputs: ContainerOutputs,
    private readonly filesystems: ContainerFilesystems,
    private readonly opts: ControllerOptions,
  ) {
    this.kubelet = new Kubelet(reg, outputs, filesystems)
    this.unsubscribe = reg.subscribe((e) => this.observe(e))
    this.cronTimer = setInterval(() => this.checkCronJobs(), opts.cronIntervalMs)
  }

  stop(): void {
    clearInterval(this.cronTimer)
    this.unsubscribe()
    this.queue.clear()
    this.kubelet.stop()
    this.wakeIdleWaiters()
  }

  /** Queues every CronJob's schedule check, as the periodic timer does. */
  checkCronJobs(): void {
    for (const cj of this.reg.list(resource(this.reg, 'batch', 'cronjobs'), '').items)
      this.reconcileCronJob(cj.metadata.namespace ?? '', cj.metadata.name!)
  }

  private reconcileCronJob(ns: string, name: string): void {
    this.enqueue(`CronJob/${ns}/${name}`, () => reconcileCronJob(this.reg, ns, name, this.opts.now()))
  }

  /**
   * Resolves once no reconcile is queued, including those the running ones queued: what the writes
   * so far set in motion has happened (used after seeding, so pods exist before the first request).
   */
  settled(): Promise<void> {
    if (!this.scheduled && this.queue.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private wakeIdleWaiters(): void {
    for (const wake of this.idleWaiters.splice(0)) wake()
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
      try {
        fn()
      } catch {
        /* the object changed or went away meanwhile; its next event reconciles again */
      }
    }
    if (!this.scheduled && this.queue.size === 0) this.wakeIdleWaiters()
  }

  private reconcileOwner(kind: string, ns: string, name: string): void {
    const owner = OWNERS[kind]
    if (owner) this.enqueue(`${kind}/${ns}/${name}`, () => owner.reconcile(this.reg, ns, name))
  }

  private observe(e: StoreEvent): void {
    const { group, resource: plural } = groupResource(e.resource)
    const key = `${group}/${plural}`
    const obj = e.object
    const ns = obj.metadata.namespace ?? ''
    const name = obj.metadata.name!
    if (key === 'apiextensions.k8s.io/customresourcedefinitions') this.observeCrd(e)
    if (e.type === 'DELETED') {
      this.enqueue(`gc/${obj.metadata.uid}`, () => this.collectDependents(obj))
      if (key === '/namespaces') this.enqueue(`ns/${name}`, () => this.emptyNamespace(name))
      if (key === '/pods') {
        this.outputs.forget(obj.metadata.uid ?? '')
        this.filesystems.forget(obj.metadata.uid ?? '')
      }
    }
    const owner = controllerOf(obj)
    if (owner?.kind === 'CronJob') this.reconcileCronJob(ns, owner.name)
    else if (owner) this.reconcileOwner(owner.kind, ns, owner.name)
    if (key === '/services' || key === '/pods') this.endpointsOf(key === '/services' ? [name] : undefined, ns)
    if (key === '/pods') this.budgetsIn(ns)
    if (e.type === 'DELETED') return
    const own = Object.entries(OWNERS).find(([, o]) => o.key === key)
    if (own) this.reconcileOwner(own[0], ns, name)
    if (key === 'batch/cronjobs') this.reconcileCronJob(ns, name)
    if (key === '/namespaces' && e.type === 'ADDED') this.enqueue(`sa/${name}`, () => this.createDefaultServiceAccount(name))
    if (key === 'policy/poddisruptionbudgets') this.enqueue(`pdb/${ns}/${name}`, () => reconcileDisruptionBudget(this.reg, ns, name))
    if (key === '/persistentvolumeclaims') this.enqueue(`pvc/${ns}/${name}`, () => bindClaim(this.reg, ns, name))
    if (key === '/pods' && fieldAt(obj, ['status', 'phase']) === 'Pending')
      this.enqueue(`kubelet/${ns}/${name}`, () => this.kubelet.startPod(ns, name))
    if (key === '/nodes') this.observeNode()
  }

  /** Endpoints of the named services, or of every service in `ns` when a pod there changed. */
  private endpointsOf(names: string[] | undefined, ns: string): void {
    const services = names ?? this.reg.list(resource(this.reg, '', 'services'), ns).items.map((s) => s.metadata.name!)
    for (const svc of services) this.enqueue(`ep/${ns}/${svc}`, () => reconcileEndpoints(this.reg, ns, svc))
  }

  private budgetsIn(ns: string): void {
    for (const pdb of this.reg.list(resource(this.reg, 'policy', 'poddisruptionbudgets'), ns).items) {
      const name = pdb.metadata.name!
      this.enqueue(`pdb/${ns}/${name}`, () => reconcileDisruptionBudget(this.reg, ns, name))
    }
  }

  /** A node added, relabelled, tainted or uncordoned may take pending pods and change where daemons run. */
  private observeNode(): void {
    for (const pod of this.reg.list(resource(this.reg, '', 'pods'), '').items)
      if (fieldAt(pod, ['status', 'phase']) === 'Pending' && !fieldAt(pod, ['spec', 'nodeName'])) {
        const [podNs, podName] = [pod.metadata.namespace ?? '', pod.metadata.name!]
        this.enqueue(`kubelet/${podNs}/${podName}`, () => this.kubelet.startPod(podNs, podName))
      }
    for (const ds of this.reg.list(resource(this.reg, 'apps', 'daemonsets'), '').items)
      this.reconcileOwner('DaemonSet', ds.metadata.namespace ?? '', ds.metadata.name!)
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
    const r = resource(this.reg, 'apiextensions.k8s.io', 'customresourcedefinitions')
    const crd = this.reg.get(r, '', name)
    const spec = crd.spec as JsonObject
    const time = nowIso()
    const condition = (type: string, reason: string, message: string) => ({
      type,
      status: 'True',
      lastTransitionTime: time,
      reason,
      message,
    })
    if (fieldAt(crd, ['status', 'acceptedNames', 'plural']) === fieldAt(spec, ['names', 'plural'])) return
    this.reg.update(
      r,
      '',
      name,
      {
        ...crd,
        status: {
          conditions: [
            condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
            condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
          ],
          acceptedNames: spec.names,
          storedVersions: (spec.versions as JsonObject[]).filter((v) => v.storage === true).map((v) => v.name),
        },
      },
      { subresource: 'status' },
    )
  }

  /** Background propagation: dependents of a deleted owner are deleted in turn (or just lose the reference when they have other owners). */
  private collectDependents(owner: KubeObject): void {
    for (const { resource: r, object } of this.reg.dependentsOf(owner.metadata.uid!)) {
      const rest = withoutOwner(object, owner.metadata.uid!)
      if (rest.metadata.ownerReferences) this.reg.update(r, object.metadata.namespace ?? '', object.metadata.name!, rest)
      else this.reg.delete(r, object.metadata.namespace ?? '', object.metadata.name!)
    }
  }

  /** Every namespace gets a `default` ServiceAccount, as the serviceaccount controller ensures. */
  private createDefaultServiceAccount(ns: string): void {
    const sa = resource(this.reg, '', 'serviceaccounts')
    if (!this.reg.list(sa, ns).items.some((o) => o.metadata.name === 'default')) this.reg.create(sa, ns, { metadata: { name: 'default' } })
  }

  private emptyNamespace(ns: string): void {
    for (const r of this.reg.all()) {
      if (r.virtual || !r.strategy.namespaced) continue
      for (const o of this.reg.list(r, ns).items) this.reg.delete(r, ns, o.metadata.name!)
    }
  }
}
