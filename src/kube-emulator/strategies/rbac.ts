/** The rbac.authorization.k8s.io group: roles and bindings, stored for charts and read by the emulator's authorizer (rbac.ts). */
import { isObject, required } from '../../kube'
import type { BuiltinEntry } from './strategy'

/** The entry of one RBAC kind: a binding must name its role. */
const rbac = (kind: string, namespaced: boolean): BuiltinEntry => ({
  versions: ['v1'],
  strategy: {
    kind,
    singular: kind.toLowerCase(),
    namespaced,
    strategicMerge: true,
    validate: (obj) => (kind.endsWith('Binding') && !isObject(obj.roleRef) ? [required('roleRef')] : []),
  },
})

export const RBAC: Record<string, BuiltinEntry> = {
  'rbac.authorization.k8s.io/roles': rbac('Role', true),
  'rbac.authorization.k8s.io/rolebindings': rbac('RoleBinding', true),
  'rbac.authorization.k8s.io/clusterroles': rbac('ClusterRole', false),
  'rbac.authorization.k8s.io/clusterrolebindings': rbac('ClusterRoleBinding', false),
}
