/** The autoscaling group: HorizontalPodAutoscalers. */
import { isObject, required, type StatusCause } from '../../kube'
import { type BuiltinEntry, fieldAt } from './strategy'

export const AUTOSCALING: Record<string, BuiltinEntry> = {
  'autoscaling/horizontalpodautoscalers': {
    versions: ['v2', 'v1'],
    strategy: {
      kind: 'HorizontalPodAutoscaler',
      singular: 'horizontalpodautoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ['all'],
      subresources: { status: true },
      strategicMerge: true,
      validate: (obj) => {
        const causes: StatusCause[] = []
        if (!isObject(fieldAt(obj, ['spec', 'scaleTargetRef']))) causes.push(required('spec.scaleTargetRef'))
        if (typeof fieldAt(obj, ['spec', 'maxReplicas']) !== 'number') causes.push(required('spec.maxReplicas'))
        return causes
      },
    },
  },
}
