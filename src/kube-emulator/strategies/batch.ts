/** The batch group: Jobs and CronJobs. */
import { invalidValue, isObject, type KubeObject, required, type StatusCause } from '../../kube'
import { parseSchedule, validTimeZone } from '../cron'
import { type BuiltinEntry, canonicalTemplate, fieldAt, validateContainers } from './strategy'

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

export const BATCH: Record<string, BuiltinEntry> = {
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
}
