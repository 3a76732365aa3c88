/**
 * Authentication by bearer token and a small authorizer: a configured user is either unrestricted
 * or limited to some namespaces and/or verbs, and what those limits refuse (and everything an
 * impersonated user of no configured name asks) is allowed when a stored RoleBinding or
 * ClusterRoleBinding grants it, as Kubernetes' RBAC authorizer decides. Requests and
 * SelfSubjectAccessReviews ask the same `authorize`, so a review's answer always matches what the
 * request would get.
 */
import { isObject, type KubeObject, kubeStatus } from '../kube'
import type { VirtualHandler } from './context'
import type { Registry, Resource } from './registry'

export interface UserSpec {
  name: string
  groups?: string[]
  /** When set, only requests inside these namespaces are allowed (and `get` of the namespaces themselves). */
  namespaces?: string[]
  /** When set, only these verbs are allowed. */
  verbs?: string[]
}

export interface ResourceAttributes {
  verb: string
  group: string
  resource: string
  subresource?: string
  namespace?: string
  name?: string
}

export interface Decision {
  allowed: boolean
  reason: string
}

/** The user behind `Authorization: Bearer <token>`, or undefined. The token itself is never logged. */
export function authenticate(users: ReadonlyMap<string, UserSpec>, authorization: string | null): UserSpec | undefined {
  if (!authorization?.startsWith('Bearer ')) return undefined
  return users.get(authorization.slice(7).trim())
}

/**
 * The user a request acts as. With `Impersonate-User` (and optional `Impersonate-Group` headers)
 * the requester must be allowed to impersonate; the impersonated name gets the rules of the
 * configured user of that name, or none at all when no user has it. Throws forbidden.
 */
export function impersonate(requester: UserSpec, headers: Headers, users: ReadonlyMap<string, UserSpec>, registry: Registry): UserSpec {
  const name = headers.get('impersonate-user')
  const groups = headers.get('impersonate-group')
  if (!name) {
    if (groups) throw kubeStatus.badRequest('requested impersonation of groups without a user')
    return requester
  }
  if (!authorize(requester, { verb: 'impersonate', group: '', resource: 'users', name }, registry).allowed)
    throw kubeStatus.forbidden({ group: '', resource: 'users' }, name, requester.name, 'impersonate', '')
  const known = [...users.values()].find((u) => u.name === name)
  const asked = groups
    ? groups
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean)
    : undefined
  return { ...(known ?? { name, namespaces: [] }), groups: [...(asked ?? known?.groups ?? []), 'system:authenticated'] }
}

/**
 * Whether `user` may perform the request: by its configured limits, else by the stored bindings.
 * The reason reads like the RBAC authorizer's: what allowed it, or nothing for a refusal.
 */
export function authorize(user: UserSpec, a: ResourceAttributes, registry: Registry): Decision {
  return authorizeConfigured(user, a) ?? authorizeByBindings(user, a, registry) ?? { allowed: false, reason: '' }
}

/** What the configured user's own limits (none: unrestricted) allow, and what every authenticated user may ask; undefined for the rest. */
function authorizeConfigured(user: UserSpec, a: ResourceAttributes): Decision | undefined {
  // system:basic-user lets every authenticated user ask what they may do and who they are.
  if (
    (a.group === 'authorization.k8s.io' && a.resource === 'selfsubjectaccessreviews' && a.verb === 'create') ||
    (a.group === 'authentication.k8s.io' && a.resource === 'selfsubjectreviews' && a.verb === 'create')
  )
    return { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user"' }
  if (user.verbs && !user.verbs.includes(a.verb)) return undefined
  if (user.namespaces) {
    const ns = a.resource === 'namespaces' && !a.namespace ? a.name : a.namespace
    const readsOwnNamespace = a.resource === 'namespaces' && a.group === '' && a.verb === 'get'
    if (!ns || !user.namespaces.includes(ns) || (a.resource === 'namespaces' && !readsOwnNamespace)) return undefined
    return { allowed: true, reason: `RBAC: allowed by RoleBinding "edit" in namespace "${ns}"` }
  }
  return { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin"' }
}

const RBAC_GROUP = 'rbac.authorization.k8s.io'

interface PolicyRule {
  verbs?: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
}

interface Binding extends KubeObject {
  roleRef?: { kind?: string; name?: string }
  subjects?: { kind?: string; name?: string }[]
}

/**
 * The first binding that grants the request, as the RBAC authorizer finds it: a ClusterRoleBinding
 * (its ClusterRole, everywhere), or a RoleBinding in the request's namespace (its Role there, or a
 * ClusterRole's rules inside that namespace), whose subjects name the user (kind User) or one of
 * its groups (kind Group). Undefined when none does.
 */
function authorizeByBindings(user: UserSpec, a: ResourceAttributes, registry: Registry): Decision | undefined {
  const stored = (resource: string, namespace = '') => {
    const r = registry.lookup(RBAC_GROUP, 'v1', resource)
    return r ? (registry.list(r, namespace).items as Binding[]) : []
  }
  const ns = a.resource === 'namespaces' && !a.namespace ? a.name : a.namespace
  const bindings = [...stored('clusterrolebindings'), ...(ns ? stored('rolebindings', ns) : [])]
  for (const binding of bindings) {
    const subject = binding.subjects?.find(
      (s) => (s.kind === 'User' && s.name === user.name) || (s.kind === 'Group' && s.name !== undefined && user.groups?.includes(s.name)),
    )
    const role = binding.roleRef
    if (!subject || (role?.kind !== 'Role' && role?.kind !== 'ClusterRole') || !role.name) continue
    // A RoleBinding is stored in its namespace; a ClusterRoleBinding has none.
    const namespaced = !!binding.metadata.namespace
    if (role.kind === 'Role' && !namespaced) continue
    const roleObject = stored(role.kind === 'Role' ? 'roles' : 'clusterroles', namespaced ? binding.metadata.namespace : '').find(
      (o) => o.metadata.name === role.name,
    )
    const rules = ((roleObject as { rules?: PolicyRule[] } | undefined)?.rules ?? []).filter(isObject) as PolicyRule[]
    if (!rules.some((rule) => ruleAllows(rule, a))) continue
    const source = namespaced ? `RoleBinding "${binding.metadata.name}/${ns}"` : `ClusterRoleBinding "${binding.metadata.name}"`
    return { allowed: true, reason: `RBAC: allowed by ${source} of ${role.kind} "${role.name}" to ${subject.kind} "${subject.name}"` }
  }
  return undefined
}

/** A rule's verbs, apiGroups, resources (`pods/log` for a subresource; `*` any, `*` then `/log` the log of any) and resourceNames all match. */
function ruleAllows(rule: PolicyRule, a: ResourceAttributes): boolean {
  const has = (list: string[] | undefined, value: string) => Array.isArray(list) && (list.includes('*') || list.includes(value))
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource
  const resourceMatches =
    has(rule.resources, combined) || (!!a.subresource && Array.isArray(rule.resources) && rule.resources.includes(`*/${a.subresource}`))
  const names = rule.resourceNames ?? []
  const nameMatches = names.length === 0 || (!!a.name && names.includes(a.name))
  return has(rule.verbs, a.verb) && has(rule.apiGroups, a.group) && resourceMatches && nameMatches
}

/** SelfSubjectAccessReview: create-only, answered by `reviewHandler`. */
export const reviewResource: Resource = {
  group: 'authorization.k8s.io',
  versions: ['v1'],
  resource: 'selfsubjectaccessreviews',
  virtual: true,
  strategy: { kind: 'SelfSubjectAccessReview', singular: 'selfsubjectaccessreview', namespaced: false, verbs: ['create'] },
}

/** POST selfsubjectaccessreviews: 201 with `status.allowed` from the same `authorize` requests use (and its reason, when it has one); never 403. */
export const reviewHandler: VirtualHandler = ({ user, body, registry }) => {
  const spec = isObject(body) && isObject(body.spec) ? body.spec : undefined
  const attrs = spec && isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined
  const nonResource = spec && isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined
  if (!attrs === !nonResource)
    throw kubeStatus.invalid({ group: 'authorization.k8s.io', kind: 'SelfSubjectAccessReview' }, '', [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        field: 'spec.resourceAttributes',
      },
    ])
  const text = (v: unknown) => (typeof v === 'string' ? v : '')
  const decision = attrs
    ? authorize(
        user,
        {
          verb: text(attrs.verb),
          group: text(attrs.group),
          resource: text(attrs.resource),
          subresource: text(attrs.subresource),
          namespace: text(attrs.namespace),
          name: text(attrs.name),
        },
        registry,
      )
    : { allowed: true, reason: 'RBAC: non-resource URLs are open to every authenticated user' }
  const metadata = isObject(body) && isObject(body.metadata) ? body.metadata : {}
  return {
    code: 201,
    body: {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { ...metadata, creationTimestamp: null },
      spec,
      status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
    },
  }
}

export const whoamiResource: Resource = {
  group: 'authentication.k8s.io',
  versions: ['v1'],
  resource: 'selfsubjectreviews',
  virtual: true,
  strategy: { kind: 'SelfSubjectReview', singular: 'selfsubjectreview', namespaced: false, verbs: ['create'] },
}

/** POST selfsubjectreviews (`kubectl auth whoami`): 201 with the user the request acted as. */
export const whoamiHandler: VirtualHandler = ({ user }) => ({
  code: 201,
  body: {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: user.name, groups: user.groups ?? ['system:authenticated'] } },
  },
})
