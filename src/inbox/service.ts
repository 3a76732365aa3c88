import type { Actor } from '../authz/actor'
import type { OrgScope } from '../authz/authorize'
import { rfc3339 } from '../clock'
import { resolveClusterByUid } from '../clusters/access'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { writeInOrg } from '../orgs/service'
import type { CreateInboxSubscriptionOption, InboxSubscription, SubscriptionFilters } from './schemas'
import * as store from './store'

export const Messages = {
  notSubscribed: 'you are not subscribed to this organization',
  missingField: (field: string, scope: string) => `${field} is required for ${scope} subscriptions`,
} as const

function present(row: store.SubscriptionRow): InboxSubscription {
  return {
    id: row.id,
    subscriberID: row.subscriberId,
    subscriberType: row.subscriberType,
    scope: row.scope as InboxSubscription['scope'],
    orgID: row.orgId,
    orgName: row.orgName,
    clusterOwnerID: row.clusterOwnerId,
    clusterUID: row.clusterUid,
    clusterName: row.clusterName,
    namespaceUID: row.namespaceUid,
    namespaceName: row.namespaceName,
    apiGroup: row.apiGroup,
    version: row.version,
    resource: row.resource,
    resourceName: row.resourceName,
    resourceUID: row.resourceUid,
    createdAt: rfc3339(row.createdAt),
    updatedAt: rfc3339(row.updatedAt),
  }
}

/** The caller's subscriptions; each given filter must match exactly. */
export async function listSubscriptions(deps: Deps, actor: Actor, filters: SubscriptionFilters): Promise<InboxSubscription[]> {
  const rows = await store.listSubscriptions(deps.db.read, actor.user.id, {
    scope: filters.scope,
    orgId: filters.orgID,
    orgName: filters.orgName,
    clusterName: filters.clusterName,
    clusterUid: filters.clusterUID,
    namespaceName: filters.namespaceName,
    namespaceUid: filters.namespaceUID,
    apiGroup: filters.apiGroup,
    version: filters.version,
    resource: filters.resource,
    resourceName: filters.resourceName,
    resourceUid: filters.resourceUID,
  })
  return rows.map(present)
}

const orgKey = (orgId: number) => `org/${orgId}`

/**
 * Subscribes the caller to a cluster, namespace or resource. The fields identifying the scope
 * are required; those of narrower scopes must be empty; the cluster must be one the caller may
 * use. Throws invalid, notFound, duplicate.
 */
export async function createSubscription(deps: Deps, actor: Actor, input: CreateInboxSubscriptionOption): Promise<InboxSubscription> {
  const needed: (keyof CreateInboxSubscriptionOption)[] =
    input.scope === 'cluster'
      ? []
      : input.scope === 'namespace'
        ? ['namespaceUID', 'namespaceName']
        : ['namespaceUID', 'namespaceName', 'version', 'resource', 'resourceName', 'resourceUID']
  const missing = needed.filter((f) => !input[f])
  if (missing.length > 0)
    throw new AppError(
      'invalid',
      Messages.missingField(missing[0], input.scope),
      missing.map((f) => ({ field: f, message: Messages.missingField(f, input.scope) })),
    )
  // A subscription names a cluster: only one the caller may use (a missing or hidden one is the same 404).
  await resolveClusterByUid(deps, actor, input.clusterUID, 'read')
  const narrow = input.scope === 'resource'
  const row: store.NewSubscription = {
    subscriberId: actor.user.id,
    scope: input.scope,
    orgId: input.orgID ?? '',
    orgName: input.orgName ?? '',
    clusterOwnerId: input.clusterOwnerID ?? 0,
    clusterUid: input.clusterUID,
    clusterName: input.clusterName,
    namespaceUid: input.scope === 'cluster' ? '' : input.namespaceUID!,
    namespaceName: input.scope === 'cluster' ? '' : input.namespaceName!,
    apiGroup: narrow ? (input.apiGroup ?? '') : '',
    version: narrow ? input.version! : '',
    resource: narrow ? input.resource! : '',
    resourceName: narrow ? input.resourceName! : '',
    resourceUid: narrow ? input.resourceUID! : '',
    key: '',
  }
  row.key = [row.scope, row.clusterUid, row.namespaceUid, row.apiGroup, row.version, row.resource, row.resourceUid].join('/')
  return present(await deps.db.write((tx) => store.insertSubscription(tx, row)))
}

/** Throws notFound unless the caller is subscribed to the org. */
export async function assertOrgSubscription(deps: Deps, actor: Actor, scope: OrgScope): Promise<void> {
  if (!(await store.findByKey(deps.db.read, actor.user.id, orgKey(scope.org.id)))) throw new AppError('notFound', Messages.notSubscribed)
}

/** Subscribes the caller to the org; subscribing twice is a no-op. Throws notFound (org deleted meanwhile). */
export async function subscribeToOrg(deps: Deps, actor: Actor, scope: OrgScope): Promise<void> {
  await writeInOrg(deps, scope, (tx) =>
    store.insertSubscriptionIfAbsent(tx, {
      subscriberId: actor.user.id,
      scope: 'org',
      key: orgKey(scope.org.id),
      orgId: String(scope.org.id),
      orgName: scope.org.name,
    }),
  )
}

/** Ends the caller's org subscription; not being subscribed is a no-op. */
export async function unsubscribeFromOrg(deps: Deps, actor: Actor, scope: OrgScope): Promise<void> {
  await deps.db.write((tx) => store.deleteByKey(tx, actor.user.id, orgKey(scope.org.id)))
}
