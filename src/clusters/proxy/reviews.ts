import { USER_TYPE } from '../../../db/schema/codes'
import { type Actor, missingScopeMessage, scopesAllow } from '../../authz/actor'
import { ClusterMessages, type ClusterScope } from '../../authz/clusters'
import { pathInfoOf } from './request-info'

/** What a read (`read` access or a `read:cluster` token) may ask of a member: the verbs of authz/clusters.ts' `read`. */
const READ_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch'])
/** Subresources that open a session: never a read, whatever the verb. */
const SESSION_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward'])

/**
 * The groups the platform names a caller by on a cluster (docs/decisions.md §12): the owning
 * organization, and each of the caller's teams that was granted the cluster. A user's own cluster has none.
 */
export function platformGroupsOf(scope: ClusterScope): string[] {
  if (scope.owner.type !== USER_TYPE.organization) return []
  const org = scope.owner.name
  return [`platform:org:${org}`, ...scope.grantedTeams.map((team) => `platform:team:${org}:${team}`)]
}

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 201, headers: { 'content-type': 'application/json' } })

/** `kubectl auth whoami`: the platform user and groups, whatever the member would say of the platform's own credential. */
function selfSubjectReview(me: Actor, scope: ClusterScope, apiVersion: string): Response {
  return json({
    kind: 'SelfSubjectReview',
    apiVersion: `authentication.k8s.io/${apiVersion}`,
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: me.user.name, groups: platformGroupsOf(scope) } },
  })
}

interface AccessReviewSpec {
  resourceAttributes?: { verb?: unknown; subresource?: unknown }
  nonResourceAttributes?: { verb?: unknown }
}

/** Whether a read may do what an access review's spec asks. */
function readAllows(spec: AccessReviewSpec): boolean {
  const resource = spec.resourceAttributes
  if (resource) return READ_VERBS.has(String(resource.verb)) && !SESSION_SUBRESOURCES.has(String(resource.subresource ?? ''))
  return ['get', 'head'].includes(String(spec.nonResourceAttributes?.verb))
}

/** Why the platform refuses writes to this caller: the token's scope, else the grant. */
const readOnlyReason = (me: Actor) =>
  scopesAllow(me.scopes, 'write', 'cluster') ? ClusterMessages.needsWrite : missingScopeMessage('write', 'cluster')

/**
 * The platform's own answer to an identity review on the kubectl endpoint (docs/decisions.md §12),
 * undefined when the member answers: `SelfSubjectReview` always; a `SelfSubjectAccessReview` from a
 * read-only caller (token or grant) for what the platform would refuse, `allowed: false` with the
 * platform's reason. `body` is the request's parsed JSON (undefined when it is not JSON: the member answers).
 */
export function platformReview(me: Actor, scope: ClusterScope, method: string, rest: string, body: unknown): Response | undefined {
  if (method !== 'POST') return undefined
  const info = pathInfoOf('k8s', rest)
  if (info.name || info.namespace) return undefined
  if (info.apiGroup === 'authentication.k8s.io' && info.resource === 'selfsubjectreviews')
    return selfSubjectReview(me, scope, info.apiVersion)
  const readOnly = scope.access === 'read' || !scopesAllow(me.scopes, 'write', 'cluster')
  if (!readOnly || info.apiGroup !== 'authorization.k8s.io' || info.resource !== 'selfsubjectaccessreviews') return undefined
  const spec = (body as { spec?: AccessReviewSpec } | undefined)?.spec
  if (typeof spec !== 'object' || spec === null || readAllows(spec)) return undefined
  return json({
    kind: 'SelfSubjectAccessReview',
    apiVersion: `authorization.k8s.io/${info.apiVersion}`,
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: false, reason: readOnlyReason(me) },
  })
}
