/** The apps group: Deployments, ReplicaSets, StatefulSets, DaemonSets and their ControllerRevisions. */
import { invalidValue, isObject, type JsonObject, type KubeObject, required, type StatusCause } from '../../kube'
import { type BuiltinEntry, canonicalTemplate, fieldAt, type ScaleSpec, validateContainers, validateSelector } from './strategy'

/** Workloads: a selector that matches the template's labels, non-negative replicas, containers. */
function validateWorkload(obj: KubeObject): StatusCause[] {
  const replicas = fieldAt(obj, ['spec', 'replicas'])
  const causes =
    replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
      ? [invalidValue('spec.replicas', replicas, 'must be greater than or equal to 0')]
      : []
  return [...causes, ...validateSelector(obj), ...validateContainers(fieldAt(obj, ['spec', 'template', 'spec']), 'spec.template.spec')]
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

/** The rolling-update defaults of Deployments, StatefulSets and DaemonSets. */
const DEFAULT_UPDATE: Record<string, JsonObject> = {
  Deployment: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
  StatefulSet: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
  DaemonSet: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
}

const WORKLOAD_SCALE: ScaleSpec = {
  specReplicasPath: ['spec', 'replicas'],
  statusReplicasPath: ['status', 'replicas'],
  labelSelectorPath: ['spec', 'selector'],
}

export const APPS: Record<string, BuiltinEntry> = {
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
}
