/**
 * The scheduler and kubelet in one: bind a pending pod to a node it fits (or report why none fits:
 * `PodScheduled=False/Unschedulable` and a `FailedScheduling` event), then report every container
 * running and ready. Pods that must not restart (`Never`, `OnFailure`: a Job's) then run their
 * command in the built-in shell and end `Succeeded` or `Failed` with each container's exit code.
 */
import { isObject, type JsonObject, type KubeObject } from '../../kube'
import type { ContainerOutputs } from '../container-output'
import type { ContainerFilesystems } from '../filesystem'
import type { Registry } from '../registry'
import { randomSuffix } from '../registry'
import { type Io, runCommand } from '../shell'
import { fieldAt } from '../strategies'
import { nowIso, recordEvent, resource, setStatus } from './common'
import { feasibleNodes } from './scheduling'
import { serviceResolver } from './services'

const containersOf = (pod: KubeObject) =>
  (Array.isArray(fieldAt(pod, ['spec', 'containers'])) ? (fieldAt(pod, ['spec', 'containers']) as unknown[]) : []).filter(isObject)

export class Kubelet {
  private nodeCursor = 0
  private podIp = 10
  private readonly abort = new AbortController()

  constructor(
    private readonly reg: Registry,
    private readonly outputs: ContainerOutputs,
    private readonly filesystems: ContainerFilesystems,
  ) {}

  stop(): void {
    this.abort.abort()
  }

  /** Schedules and starts a pending pod; a pod that fits no node stays Pending with the reason. */
  startPod(ns: string, name: string): void {
    const reg = this.reg
    const pr = resource(reg, '', 'pods')
    let pod = reg.get(pr, ns, name)
    if (fieldAt(pod, ['status', 'phase']) !== 'Pending' || pod.metadata.deletionTimestamp) return
    const spec = pod.spec as JsonObject
    let nodeName = typeof spec.nodeName === 'string' ? spec.nodeName : ''
    const nodes = reg.list(resource(reg, '', 'nodes'), '').items
    if (!nodeName) {
      const { nodes: feasible, message } = feasibleNodes(pod, nodes)
      if (!feasible.length) return this.unschedulable(pod, message)
      nodeName = feasible[this.nodeCursor++ % feasible.length].metadata.name!
      pod = reg.update(pr, ns, name, { ...pod, spec: { ...spec, nodeName } })
      recordEvent(reg, pr, pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${nodeName}`, 'default-scheduler')
    }
    const node = nodes.find((n) => n.metadata.name === nodeName)
    if (!node) return
    const hostIP = String(
      (fieldAt(node, ['status', 'addresses']) as JsonObject[] | undefined)?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.10',
    )
    const time = nowIso()
    const containers = containersOf(pod)
    for (const c of containers) {
      recordEvent(reg, pr, pod, 'Normal', 'Pulled', `Container image "${String(c.image)}" already present on machine`, 'kubelet')
      recordEvent(reg, pr, pod, 'Normal', 'Created', `Created container: ${String(c.name)}`, 'kubelet')
      recordEvent(reg, pr, pod, 'Normal', 'Started', `Started container ${String(c.name)}`, 'kubelet')
    }
    const ip = this.podIp++
    const podIP = `10.244.${(ip >> 8) & 0xff}.${ip & 0xff}`
    const condition = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: time })
    pod = setStatus(reg, pr, pod, {
      phase: 'Running',
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: time,
      qosClass: (fieldAt(pod, ['status', 'qosClass']) as string) ?? 'BestEffort',
      conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: `${String(c.image).includes('/') ? '' : 'docker.io/library/'}${String(c.image).split(':')[0]}@sha256:${Bun.hash(String(c.image)).toString(16).padStart(16, '0').repeat(4)}`,
        containerID: `containerd://${randomSuffix(8)}${Bun.hash(`${name}/${String(c.name)}`).toString(16)}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: time } },
      })) as JsonObject[],
    })
    if (spec.restartPolicy === 'Never' || spec.restartPolicy === 'OnFailure') void this.runToCompletion(pod)
  }

  /** Reports once per distinct reason, so the pod's own update does not bring another event. */
  private unschedulable(pod: KubeObject, message: string): void {
    const conditions = fieldAt(pod, ['status', 'conditions'])
    const already =
      Array.isArray(conditions) &&
      conditions.some((c) => isObject(c) && c.type === 'PodScheduled' && c.status === 'False' && c.message === message)
    if (already) return
    const pr = resource(this.reg, '', 'pods')
    const updated = setStatus(this.reg, pr, pod, {
      ...(pod.status as JsonObject),
      conditions: [
        { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: nowIso(), reason: 'Unschedulable', message },
      ],
    })
    recordEvent(this.reg, pr, updated, 'Warning', 'FailedScheduling', message, 'default-scheduler')
  }

  /** Runs each container's command and args in the built-in shell; the pod ends with their exit codes. */
  private async runToCompletion(pod: KubeObject): Promise<void> {
    const exits: number[] = []
    const uid = pod.metadata.uid ?? ''
    for (const c of containersOf(pod)) this.outputs.start(uid, String(c.name))
    for (const c of containersOf(pod)) {
      const write = (data: string | Uint8Array) =>
        this.outputs.write(uid, String(c.name), typeof data === 'string' ? data : new TextDecoder().decode(data))
      const argv = [...(Array.isArray(c.command) ? c.command.map(String) : []), ...(Array.isArray(c.args) ? c.args.map(String) : [])]
      const env = Object.fromEntries(
        (Array.isArray(c.env) ? c.env.filter(isObject) : []).map((e) => [String(e.name), String(e.value ?? '')]),
      )
      const io: Io = {
        stdin: { read: async () => null, readLine: async () => null },
        out: write,
        err: write,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOSTNAME: pod.metadata.name ?? '', ...env },
        signal: this.abort.signal,
        tty: false,
        hostname: pod.metadata.name ?? '',
        size: () => ({ width: 80, height: 24 }),
        fs: this.filesystems.of(uid, String(c.name), pod.metadata.name ?? ''),
        lookupService: serviceResolver(this.reg, pod.metadata.namespace ?? ''),
      }
      const result = argv.length ? await runCommand(argv, io) : 0
      if (typeof result === 'string') write(`${result}\n`)
      exits.push(typeof result === 'number' ? result : 127)
      this.outputs.finish(uid, String(c.name))
    }
    if (this.abort.signal.aborted) return
    const pr = resource(this.reg, '', 'pods')
    const ns = pod.metadata.namespace ?? ''
    try {
      const current = this.reg.get(pr, ns, pod.metadata.name!)
      if (current.metadata.uid !== pod.metadata.uid || current.metadata.deletionTimestamp) return
      const time = nowIso()
      const ok = exits.every((e) => e === 0)
      const status = (isObject(current.status) ? current.status : {}) as Record<string, unknown>
      const condition = (type: string, value: boolean) => ({
        type,
        status: value ? 'True' : 'False',
        lastProbeTime: null,
        lastTransitionTime: time,
        ...(value ? {} : { reason: 'PodCompleted' }),
      })
      setStatus(this.reg, pr, current, {
        ...status,
        phase: ok ? 'Succeeded' : 'Failed',
        conditions: [
          condition('PodReadyToStartContainers', false),
          condition('Initialized', true),
          condition('Ready', false),
          condition('ContainersReady', false),
          condition('PodScheduled', true),
        ],
        containerStatuses: (Array.isArray(status.containerStatuses) ? status.containerStatuses.filter(isObject) : []).map((cs, i) => ({
          ...cs,
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode: exits[i] ?? 0,
              reason: exits[i] ? 'Error' : 'Completed',
              startedAt: fieldAt(cs, ['state', 'running', 'startedAt']) ?? time,
              finishedAt: time,
              containerID: cs.containerID ?? '',
            },
          },
        })),
      } as unknown as JsonObject)
    } catch {
      /* the pod went away while its command ran */
    }
  }
}
