/** The networking.k8s.io group: Ingresses and NetworkPolicies. */
import { isObject } from '../../kube'
import type { BuiltinEntry } from './strategy'

export const NETWORKING: Record<string, BuiltinEntry> = {
  'networking.k8s.io/ingresses': {
    versions: ['v1'],
    strategy: {
      kind: 'Ingress',
      singular: 'ingress',
      namespaced: true,
      shortNames: ['ing'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        obj.status = { loadBalancer: {} }
      },
    },
  },
  'networking.k8s.io/networkpolicies': {
    versions: ['v1'],
    strategy: {
      kind: 'NetworkPolicy',
      singular: 'networkpolicy',
      namespaced: true,
      shortNames: ['netpol'],
      strategicMerge: true,
      tracksGeneration: true,
      prepareForCreate: (obj) => {
        const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {})
        spec.podSelector ??= {}
        spec.policyTypes ??= ['Ingress', ...(spec.egress !== undefined ? ['Egress'] : [])]
      },
    },
  },
}
