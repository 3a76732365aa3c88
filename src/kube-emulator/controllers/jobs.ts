/**
 * The Job and CronJob controllers. Jobs: up to `parallelism` pods at a time until `completions` succeeded (the kubelet
 * runs their commands in the built-in shell), then the `Complete` condition that `kubectl wait
 * --for=condition=complete` waits for; more than `backoffLimit` failures end it `Failed`.
 */
import { clone, isObject, type JsonObject, type KubeObject } from '../../kube'
import { lastScheduledTime, parseSchedule } from '../cron'
import type { Registry } from '../registry'
import { fieldAt } from '../strategies'
import { isRunning, newPod, nowIso, owned, ownerRef, phaseOf, recordEvent, resource, setStatus } from './common'

const finished = (job: KubeObject) =>
  (Array.isArray(fieldAt(job, ['status', 'conditions'])) ? (fieldAt(job, ['status', 'conditions']) as unknown[]) : []).some(
    (c) => isObject(c) && (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  )

export function reconcileJob(reg: Registry, ns: string, name: string): void {
  const jr = resource(reg, 'batch', 'jobs')
  const pr = resource(reg, '', 'pods')
  const job = reg.get(jr, ns, name)
  if (job.metadata.deletionTimestamp || finished(job)) return
  const spec = job.spec as JsonObject
  const [completions, parallelism, backoffLimit] = [
    Number(spec.completions ?? 1),
    Number(spec.parallelism ?? 1),
    Number(spec.backoffLimit ?? 6),
  ]
  const pods = owned(reg, pr, ns, job).filter((p) => !p.metadata.deletionTimestamp)
  const succeeded = pods.filter((p) => phaseOf(p) === 'Succeeded').length
  const failed = pods.filter((p) => phaseOf(p) === 'Failed').length
  const active = pods.filter((p) => phaseOf(p) === 'Pending' || phaseOf(p) === 'Running')
  const time = nowIso()
  const startTime = String(fieldAt(job, ['status', 'startTime']) ?? time)
  const counts = {
    startTime,
    active: active.length,
    succeeded,
    failed,
    ready: active.filter(isRunning).length,
    terminating: 0,
    uncountedTerminatedPods: {},
  }
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    lastProbeTime: time,
    lastTransitionTime: time,
    reason,
    message,
  })
  if (succeeded >= completions) {
    setStatus(reg, jr, job, {
      ...counts,
      active: 0,
      ready: 0,
      completionTime: time,
      conditions: [
        condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'),
        condition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods'),
      ],
    })
    recordEvent(reg, jr, job, 'Normal', 'Completed', 'Job completed', 'job-controller')
    return
  }
  if (failed > backoffLimit) {
    for (const p of active) reg.delete(pr, ns, p.metadata.name!)
    setStatus(reg, jr, job, {
      ...counts,
      active: 0,
      ready: 0,
      conditions: [
        condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
        condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    })
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

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z')
const finishedAt = (job: KubeObject) => Date.parse(String(fieldAt(job, ['status', 'completionTime']) ?? job.metadata.creationTimestamp))
const succeededJob = (job: KubeObject) =>
  (Array.isArray(fieldAt(job, ['status', 'conditions'])) ? (fieldAt(job, ['status', 'conditions']) as unknown[]) : []).some(
    (c) => isObject(c) && c.type === 'Complete' && c.status === 'True',
  )

/**
 * The CronJob controller: when a scheduled minute has passed since the last one (read against the
 * emulator's clock, in `timeZone`), a Job from `jobTemplate` named `<cronjob>-<minutes since epoch>`,
 * honouring `suspend` and `concurrencyPolicy`; finished Jobs beyond the history limits are deleted.
 */
export function reconcileCronJob(reg: Registry, ns: string, name: string, now: number): void {
  const cr = resource(reg, 'batch', 'cronjobs')
  const jr = resource(reg, 'batch', 'jobs')
  const cj = reg.get(cr, ns, name)
  if (cj.metadata.deletionTimestamp) return
  const spec = cj.spec as JsonObject
  const status = (isObject(cj.status) ? cj.status : {}) as JsonObject
  let jobs = owned(reg, jr, ns, cj)
  let lastScheduleTime = typeof status.lastScheduleTime === 'string' ? status.lastScheduleTime : undefined
  const since = Date.parse(lastScheduleTime ?? String(cj.metadata.creationTimestamp))
  const due =
    spec.suspend === true ? undefined : lastScheduledTime(parseSchedule(String(spec.schedule)), since, now, String(spec.timeZone ?? 'UTC'))
  const active = () => jobs.filter((j) => !finished(j))
  if (due !== undefined && !(spec.concurrencyPolicy === 'Forbid' && active().length)) {
    if (spec.concurrencyPolicy === 'Replace') for (const j of active()) reg.delete(jr, ns, j.metadata.name!)
    const template = isObject(spec.jobTemplate) ? spec.jobTemplate : {}
    const meta = isObject(template.metadata) ? template.metadata : {}
    const job = reg.create(jr, ns, {
      metadata: {
        name: `${name}-${Math.floor(due / 60_000)}`,
        labels: { ...(meta.labels as Record<string, string> | undefined) },
        annotations: {
          ...(meta.annotations as Record<string, string> | undefined),
          'batch.kubernetes.io/cronjob-scheduled-timestamp': iso(due),
        },
        ownerReferences: [ownerRef(cr, cj)],
      },
      spec: clone(isObject(template.spec) ? template.spec : {}),
    })
    recordEvent(reg, cr, cj, 'Normal', 'SuccessfulCreate', `Created job ${job.metadata.name}`, 'cronjob-controller')
    lastScheduleTime = iso(due)
    jobs = owned(reg, jr, ns, cj)
  }
  for (const [ok, limit] of [
    [true, Number(spec.successfulJobsHistoryLimit ?? 3)],
    [false, Number(spec.failedJobsHistoryLimit ?? 1)],
  ] as const) {
    const done = jobs.filter((j) => finished(j) && succeededJob(j) === ok).sort((a, b) => finishedAt(a) - finishedAt(b))
    for (const j of done.slice(0, Math.max(0, done.length - limit))) reg.delete(jr, ns, j.metadata.name!)
  }
  jobs = owned(reg, jr, ns, cj)
  const lastSuccess = Math.max(0, ...jobs.filter(succeededJob).map(finishedAt))
  setStatus(reg, cr, cj, {
    ...(active().length
      ? {
          active: active().map((j) => ({
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: j.metadata.name!,
            namespace: ns,
            uid: j.metadata.uid!,
            resourceVersion: j.metadata.resourceVersion!,
          })),
        }
      : {}),
    ...(lastScheduleTime ? { lastScheduleTime } : {}),
    ...(lastSuccess ? { lastSuccessfulTime: iso(lastSuccess) } : {}),
  })
}
