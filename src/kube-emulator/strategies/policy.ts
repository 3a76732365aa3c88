/** The policy group: PodDisruptionBudgets. */
import type { BuiltinEntry } from './strategy'

export const POLICY: Record<string, BuiltinEntry> = {
  'policy/poddisruptionbudgets': {
    versions: ['v1'],
    strategy: {
      kind: 'PodDisruptionBudget',
      singular: 'poddisruptionbudget',
      namespaced: true,
      shortNames: ['pdb'],
      subresources: { status: true },
      strategicMerge: true,
      tracksGeneration: true,
    },
  },
}
