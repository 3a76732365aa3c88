/**
 * The Job controller: up to `parallelism` pods at a time until `completions` succeeded (the kubelet
 * runs their commands in the built-in shell), then the `Complete` condition that `kubectl wait
 * --for=condition=complete` waits for; more than `backoffLimit` failures end it `Failed`.
 */
import { isObject, type JsonObject, type KubeObject } from '../../kube'
import type { Registry } from '../registry'
import { fieldAt } from '../strategies'
import { isRunning, newPod, nowIso, owned, phaseOf, recordEvent, resource, setStatus } from './common'

const finished = (job: KubeObject) => (Array.isArray(fieldAt(job, ['status', 'conditions'])) ? (fieldAt(job, ['status', 'conditions']) as unknown[]) : [])
  .some((c) => isObject(c) && (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')

export function reconcileJob(reg: Registry, ns: string, name: string): void {
  const jr = resource(reg, 'batch', 'jobs')
  const pr = resource(reg, '', 'pods')
  const job = reg.get(jr, ns, name)
  if (job.metadata.deletionTimestamp || finished(job)) return
  const spec = job.spec as JsonObject
  const [completions, parallelism, backoffLimit] = [Number(spec.completions ?? 1), Number(spec.parallelism ?? 1), Number(spec.backoffLimit ?? 6)]
  const pods = owned(reg, pr, ns, job).filter((p) => !p.metadata.deletionTimestamp)
  const succeeded = pods.filter((p) => phaseOf(p) === 'Succeeded').length
  const failed = pods.filter((p) => phaseOf(p) === 'Failed').length
  const active = pods.filter((p) => phaseOf(p) === 'Pending' || phaseOf(p) === 'Running')
  const time = nowIso()
  const startTime = String(fieldAt(job, ['status', 'startTime']) ?? time)
  const counts = { startTime, active: active.length, succeeded, failed, ready: active.filter(isRunning).length, terminating: 0, uncountedTerminatedPods: {} }
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', lastProbeTime: time, lastTransitionTime: time, reason, message })
  if (succeeded >= completions) {
    setStatus(reg, jr, job, { ...counts, active: 0, ready: 0, completionTime: time,
      conditions: [condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'), condition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods')] })
    recordEvent(reg, jr, job, 'Normal', 'Completed', 'Job completed', 'job-controller')
    return
  }
  if (failed > backoffLimit) {
    for (const p of active) reg.delete(pr, ns, p.metadata.name!)
    setStatus(reg, jr, job, { ...counts, active: 0, ready: 0,
      conditions: [condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'), condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] })
    recordEvent(reg, jr, job, 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', 'job-controller')
    return
  }
  const wanted = Math.min(parallelism, completions - succeeded) - active.length
  for (let i = 0; i < wanted; i++) {
    const pod = newPod(reg, job, jr, { generateName: `${name}-` })
    counts.active++
    recordEvent(reg, jr, job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'job-controller')
  }
  setStatus(reg, jr, job, counts)
}
