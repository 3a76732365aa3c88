import { t } from 'elysia'

const Scope = t.Union([t.Literal('org'), t.Literal('cluster'), t.Literal('namespace'), t.Literal('resource')], {
  description: 'What the subscription follows',
})

export const InboxSubscription = t.Object(
  {
    id: t.Integer({ description: 'Subscription id' }),
    subscriberID: t.Integer({ description: 'Id of the subscribing user' }),
    subscriberType: t.String({ description: 'Kind of subscriber; always user' }),
    scope: Scope,
    orgID: t.String({ description: 'Organization id (org scope; may be empty for other scopes)' }),
    orgName: t.String({ description: 'Organization slug' }),
    clusterOwnerID: t.Integer({ description: 'Id of the user or org owning the cluster; 0 for org scope' }),
    clusterUID: t.String({ description: 'Cluster UID; empty for org scope' }),
    clusterName: t.String({ description: 'Cluster name; empty for org scope' }),
    namespaceUID: t.String({ description: 'Namespace UID (namespace and resource scope)' }),
    namespaceName: t.String({ description: 'Namespace name (namespace and resource scope)' }),
    apiGroup: t.String({ description: 'API group of the resource (resource scope)' }),
    version: t.String({ description: 'API version of the resource (resource scope)' }),
    resource: t.String({ description: 'Resource plural (resource scope)' }),
    resourceName: t.String({ description: 'Object name (resource scope)' }),
    resourceUID: t.String({ description: 'Object UID (resource scope)' }),
    createdAt: t.String({ format: 'date-time', description: 'When the subscription was made' }),
    updatedAt: t.String({ format: 'date-time', description: 'When it last changed' }),
  },
  { title: 'InboxSubscription' },
)
export type InboxSubscription = typeof InboxSubscription.static

const filter = (description: string) => t.Optional(t.String({ description: `Exact match on ${description}` }))
export const SubscriptionFilters = t.Object({
  scope: filter('scope (org, cluster, namespace, resource)'),
  orgID: filter('orgID'),
  orgName: filter('orgName'),
  clusterName: filter('clusterName'),
  clusterUID: filter('clusterUID'),
  namespaceName: filter('namespaceName'),
  namespaceUID: filter('namespaceUID'),
  apiGroup: filter('apiGroup'),
  version: filter('version'),
  resource: filter('resource'),
  resourceName: filter('resourceName'),
  resourceUID: filter('resourceUID'),
})
export type SubscriptionFilters = typeof SubscriptionFilters.static

const field = (description: string) => t.Optional(t.String({ maxLength: 253, description }))
export const CreateInboxSubscriptionOption = t.Object(
  {
    scope: t.Union([t.Literal('cluster'), t.Literal('namespace'), t.Literal('resource')], {
      description: 'cluster, namespace or resource; org subscriptions go through /orgs/{org}/subscription',
    }),
    orgID: field('Organization id owning the cluster, if any'),
    orgName: field('Organization slug owning the cluster, if any'),
    clusterOwnerID: t.Optional(t.Integer({ minimum: 0, description: 'Id of the user or org owning the cluster' })),
    clusterUID: t.String({ minLength: 1, maxLength: 253, description: 'Cluster UID' }),
    clusterName: t.String({ minLength: 1, maxLength: 253, description: 'Cluster name' }),
    namespaceUID: field('Namespace UID; required for namespace and resource scope'),
    namespaceName: field('Namespace name; required for namespace and resource scope'),
    apiGroup: field('API group; resource scope (empty for the core group)'),
    version: field('API version; required for resource scope'),
    resource: field('Resource plural; required for resource scope'),
    resourceName: field('Object name; required for resource scope'),
    resourceUID: field('Object UID; required for resource scope'),
  },
  { title: 'CreateInboxSubscriptionOption' },
)
export type CreateInboxSubscriptionOption = typeof CreateInboxSubscriptionOption.static
