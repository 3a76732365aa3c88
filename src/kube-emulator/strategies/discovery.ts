/** The discovery.k8s.io group: EndpointSlices. */
import { required } from '../../kube'
import type { BuiltinEntry } from './strategy'

export const DISCOVERY: Record<string, BuiltinEntry> = {
  'discovery.k8s.io/endpointslices': {
    versions: ['v1'],
    strategy: {
      kind: 'EndpointSlice',
      singular: 'endpointslice',
      namespaced: true,
      strategicMerge: true,
      validate: (obj) => (typeof obj.addressType === 'string' ? [] : [required('addressType')]),
    },
  },
}
