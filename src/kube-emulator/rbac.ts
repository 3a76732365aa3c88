/**
 * Authentication by bearer token and a deliberately small RBAC model: a user is either
 * unrestricted or limited to some namespaces and/or verbs. Requests and SelfSubjectAccessReviews
 * ask the same `authorize`, so a review's answer always matches what the request would get.
 */
import { isObject, kubeStatus } from '../kube'
import type { VirtualHandler } from './context'
import type { Resource } from './registry'

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
export function impersonate(requester: UserSpec, headers: Headers, users: ReadonlyMap<string, UserSpec>): UserSpec {
  const name = headers.get('impersonate-user')
  const groups = headers.get('impersonate-group')
  if (!name) {
    if (groups) throw kubeStatus.badRequest('requested impersonation of groups without a user')
    return requester
  }
  if (!authorize(requester, { verb: 'impersonate', group: '', resource: 'users', name }).allowed)
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

/** Whether `user` may perform the request; the reason reads like the RBAC authorizer's. */
export function authorize(user: UserSpec, a: ResourceAttributes): Decision {
  // system:basic-user lets every authenticated user ask what they may do and who they are.
  if (
    (a.group === 'authorization.k8s.io' && a.resource === 'selfsubjectaccessreviews' && a.verb === 'create') ||
    (a.group === 'authentication.k8s.io' && a.resource === 'selfsubjectreviews' && a.verb === 'create')
  )
    return { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user"' }
  if (user.verbs && !user.verbs.includes(a.verb))
    return { allowed: false, reason: `RBAC: verb "${a.verb}" is not granted to user "${user.name}"` }
  if (user.namespaces) {
    const ns = a.resource === 'namespaces' && !a.namespace ? a.name : a.namespace
    const readsOwnNamespace = a.resource === 'namespaces' && a.group === '' && a.verb === 'get'
    if (!ns || !user.namespaces.includes(ns) || (a.resource === 'namespaces' && !readsOwnNamespace))
      return { allowed: false, reason: `RBAC: user "${user.name}" is limited to namespaces [${user.namespaces.join(' ')}]` }
    return { allowed: true, reason: `RBAC: allowed by RoleBinding "edit" in namespace "${ns}"` }
  }
  return { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin"' }
}

/** SelfSubjectAccessReview: create-only, answered by `reviewHandler`. */
export const reviewResource: Resource = {
  group: 'authorization.k8s.io',
  versions: ['v1'],
  resource: 'selfsubjectaccessreviews',
  virtual: true,
  strategy: { kind: 'SelfSubjectAccessReview', singular: 'selfsubjectaccessreview', namespaced: false, verbs: ['create'] },
}

/** POST selfsubjectaccessreviews: 201 with `status.allowed` from the same `authorize` requests use; never 403. */
export const reviewHandler: VirtualHandler = ({ user, body }) => {
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
    ? authorize(user, {
        verb: text(attrs.verb),
        group: text(attrs.group),
        resource: text(attrs.resource),
        subresource: text(attrs.subresource),
        namespace: text(attrs.namespace),
        name: text(attrs.name),
      })
    : { allowed: true, reason: 'RBAC: non-resource URLs are open to every authenticated user' }
  const metadata = isObject(body) && isObject(body.metadata) ? body.metadata : {}
  return {
    code: 201,
    body: {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { ...metadata, creationTimestamp: null },
      spec,
      status: { allowed: decision.allowed, ...(decision.allowed ? {} : { denied: false }), reason: decision.reason },
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
