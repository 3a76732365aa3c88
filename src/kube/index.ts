/**
 * Kubernetes-shaped pieces shared by the emulator (`kube-emulator/`) and the cluster proxy:
 * Status errors, resource paths (group/version/resource), name rules, JSON objects and patches.
 * It imports no area of the app, so both sides can depend on it.
 */
export * from './json-patch'
export * from './names'
export * from './object'
export * from './paths'
export * from './status'
