import { t } from 'elysia'
import type { DocumentedOperation, DocumentedResponse } from '../../http/openapi-document'

/** The neutral names of the AppsCode groups (docs/decisions.md §3b). */
export const GROUPS = {
  meta: 'meta.k8s.appscode.com',
  scanner: 'reports.scanner.appscode.com',
  policy: 'policy.k8s.appscode.com',
  uiDatabase: 'ui.kubedb.com',
} as const

const K8sObject = t.Object(
  {
    apiVersion: t.Optional(t.String({ description: 'group/version, or v1 for the core group' })),
    kind: t.Optional(t.String({ description: 'The object kind (List, Table, Status for those answers)' })),
    metadata: t.Optional(t.Object({}, { additionalProperties: true, description: 'Kubernetes object metadata' })),
  },
  { title: 'K8sObject', additionalProperties: true, description: 'A free-form Kubernetes object, passed verbatim both ways' },
)

const objectIdentity = {
  namespace: t.Optional(t.String({ description: 'Namespace; empty for a cluster-scoped object' })),
  name: t.Optional(t.String({ description: 'Object name' })),
  group: t.Optional(t.String({ description: 'API group; empty or core for the legacy core group' })),
  version: t.Optional(t.String({ description: 'API version' })),
  resource: t.Optional(t.String({ description: 'Resource (plural)' })),
}

const BatchDeleteRequest = t.Object(
  { resources: t.Array(t.Object(objectIdentity), { maxItems: 500, description: 'The objects to delete, each independently' }) },
  { title: 'BatchDeleteRequest' },
)

const BatchDeleteResponse = t.Object(
  {
    resourcesStatus: t.Array(t.Object({ ...objectIdentity, status: K8sObject }), {
      description: 'Only the deletions that failed, each with the Status the member answered',
    }),
  },
  { title: 'BatchDeleteResponse' },
)

const ScaleBody = t.Object(
  { replicas: t.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Desired replicas' }) },
  { title: 'ScaleOption' },
)

const ListQuery = t.Object({
  labelSelector: t.Optional(t.String({ description: 'Kubernetes label selector' })),
  fieldSelector: t.Optional(t.String({ description: 'Kubernetes field selector' })),
  filter: t.Optional(t.String({ description: 'JSON array of JSON-pointer operations the platform applies to the answer' })),
  convertToTable: t.Optional(t.Boolean({ description: 'true: answer a meta.k8s.io Table instead of the list or object' })),
})

const RenderQuery = t.Object({ q: t.String({ description: 'The JSON-encoded request object (a create made cacheable as a GET)' }) })

const PATH_PARAMETERS = {
  owner: 'Organization slug or username owning the cluster',
  cluster: 'Cluster name',
  group: 'API group; core for the legacy core group',
  version: 'API version, e.g. v1',
  namespace: 'Namespace',
  resource: 'Resource, plural (e.g. deployments)',
  name: 'Object name',
  menu: 'Menu name',
  path: 'The Kubernetes API path as kubectl sends it (api/v1/..., apis/{group}/{version}/...), slashes included',
}

const PREFIX = '/api/v1/clusters/{owner}/{cluster}/proxy'
const object: DocumentedResponse = { description: 'The object', schema: K8sObject }
const notModified: DocumentedResponse = { description: 'If-None-Match matched the ETag' }
const anObject = (description: string): DocumentedResponse => ({ description, schema: K8sObject })
const objectBody = (required: boolean, mediaTypes?: string[]) => ({ schema: K8sObject, required, mediaTypes })

/** Every patch type Kubernetes takes, sent to the member as they are; plain JSON is a desired object (diffed). */
const PATCH_TYPES = [
  'application/json',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
]

const operation = (
  method: DocumentedOperation['method'],
  path: string,
  summary: string,
  responses: DocumentedOperation['responses'],
  extra: Pick<DocumentedOperation, 'query' | 'body'> = {},
): DocumentedOperation => ({ method, path: `${PREFIX}${path}`, summary, pathParameters: PATH_PARAMETERS, responses, ...extra })

/** The contract's rows for a resource under `base` (cluster-scoped or namespaced). */
function resourceOperations(base: string, scope: string): DocumentedOperation[] {
  const collection = `${base}/{resource}/`
  const item = `${base}/{resource}/{name}`
  return [
    operation(
      'post',
      collection,
      `Create a ${scope} object (answers 200)`,
      { 200: anObject('The created object') },
      { body: objectBody(true) },
    ),
    operation(
      'get',
      collection,
      `List ${scope} objects (ETag)`,
      { 200: anObject('The list, or a Table'), 304: notModified },
      { query: ListQuery },
    ),
    operation(
      'delete',
      collection,
      `Delete a collection of ${scope} objects`,
      { 200: anObject('The Status or deleted list') },
      {
        body: objectBody(false),
      },
    ),
    operation(
      'get',
      item,
      `Get a ${scope} object (ETag)`,
      { 200: anObject('The object, or a Table'), 304: notModified },
      { query: ListQuery },
    ),
    operation('put', item, `Replace a ${scope} object`, { 200: object }, { body: objectBody(true) }),
    operation(
      'patch',
      item,
      `Patch a ${scope} object; the patch type by Content-Type`,
      { 200: object },
      { body: objectBody(true, PATCH_TYPES) },
    ),
    operation(
      'delete',
      item,
      `Delete a ${scope} object`,
      { 200: anObject('The Status or the object being deleted') },
      {
        body: objectBody(false),
      },
    ),
    operation('put', `${item}/status`, `Replace a ${scope} object's status`, { 200: object }, { body: objectBody(true) }),
    operation('patch', `${item}/status`, `Patch a ${scope} object's status`, { 200: object }, { body: objectBody(true, PATCH_TYPES) }),
    operation('get', `${item}/events`, `Events of a ${scope} object (ETag)`, { 200: anObject('An event list'), 304: notModified }),
    operation('get', `${item}/controller`, `The controlling owner of a ${scope} object (ETag)`, {
      200: anObject('The controlling owner'),
      304: notModified,
    }),
  ]
}

const NAMESPACED = '/{group}/{version}/namespaces/{namespace}'
const renderOperation = (group: string, resource: string, summary: string) =>
  operation(
    'get',
    `/${group}/v1alpha1/${resource}`,
    summary,
    { 200: anObject('The rendered answer'), 304: notModified },
    { query: RenderQuery },
  )

/**
 * The spec's proxy routes, one operation each (docs/api/proxy.md): the proxy answers them through one
 * wildcard route, and documents them in its place.
 */
export const PROXY_OPERATIONS: DocumentedOperation[] = [
  ...resourceOperations('/{group}/{version}', 'cluster-scoped'),
  ...resourceOperations(NAMESPACED, 'namespaced'),
  operation('get', `${NAMESPACED}/{resource}/{name}/scale`, 'The Scale of an object', { 200: anObject('The Scale'), 304: notModified }),
  operation(
    'put',
    `${NAMESPACED}/{resource}/{name}/scale`,
    'Set the replicas of an object',
    { 200: anObject('The updated Scale') },
    {
      body: { schema: ScaleBody, required: true },
    },
  ),
  operation('get', `${NAMESPACED}/{resource}/{name}/horizontalpodautoscalers`, 'The autoscalers whose scale target is the object', {
    200: anObject('A HorizontalPodAutoscaler list'),
    304: notModified,
  }),
  operation('get', '/core/v1/namespaces/{namespace}/pods/{name}/log', "A pod's container logs, streamed", {
    200: { description: 'The log, streamed', schema: t.String(), mediaType: 'text/plain' },
  }),
  operation('get', '/core/v1/namespaces/{namespace}/pods/{name}/exec', 'Run a command in a pod over a WebSocket (needs write:cluster)', {
    101: { description: 'Switched to the WebSocket exec stream' },
  }),
  operation('get', '/core/v1/nodes/{name}/metrics', "A node's metrics (ETag)", { 200: anObject('NodeMetrics'), 304: notModified }),
  operation('get', '/core/v1/namespaces/{namespace}/pods/{name}/metrics', "A pod's metrics (ETag)", {
    200: anObject('PodMetrics'),
    304: notModified,
  }),
  operation(
    'post',
    '/authorization.k8s.io/v1/selfsubjectaccessreviews',
    'May I? Asked of the member as the cluster credential',
    {
      200: anObject('The review with its status'),
    },
    { body: objectBody(true) },
  ),
  operation('get', '/{group}/{version}/all-available', 'The names of every object of the group version, by kind', {
    200: { description: 'Kind → object names', schema: t.Record(t.String(), t.Array(t.String())) },
    304: notModified,
  }),
  renderOperation(GROUPS.meta, 'renders', 'Render an object view'),
  renderOperation(GROUPS.meta, 'renderdashboards', 'Render dashboards'),
  renderOperation(GROUPS.meta, 'rendermenus', 'Render a menu'),
  renderOperation(GROUPS.meta, 'resourcegraphs', 'A resource graph'),
  operation('get', `/${GROUPS.meta}/v1alpha1/{resource}/{menu}/available`, 'The available user menus', { 200: anObject('The menus') }),
  renderOperation(GROUPS.scanner, 'images', 'An image scan report'),
  renderOperation(GROUPS.scanner, 'cvereports', 'A CVE report'),
  renderOperation(GROUPS.policy, 'policyreports', 'A policy report'),
  operation(
    'get',
    `/${GROUPS.uiDatabase}/v1alpha1/namespaces/{namespace}/databaseconfigurations/{name}`,
    'A database configuration (every query parameter but filter and convertToTable goes to the member)',
    { 200: anObject('The DatabaseConfiguration, without resourceVersion'), 304: notModified },
  ),
  operation(
    'post',
    '/batch-delete',
    'Delete objects independently; the answer lists the failures',
    {
      200: { description: 'The failed deletions', schema: BatchDeleteResponse },
    },
    { body: { schema: BatchDeleteRequest, required: true } },
  ),
]

const PASSTHROUGH_METHODS: DocumentedOperation['method'][] = ['get', 'post', 'put', 'patch', 'delete']

/** The native passthrough (…/k8s/…): any Kubernetes API path, the member's answer unchanged. */
export const PASSTHROUGH_OPERATIONS: DocumentedOperation[] = PASSTHROUGH_METHODS.map((method) => ({
  method,
  path: '/api/v1/clusters/{owner}/{cluster}/k8s/{path}',
  summary: `Kubernetes API ${method.toUpperCase()} passed through to the member (point kubectl, Helm or client-node at …/k8s)`,
  pathParameters: PATH_PARAMETERS,
  ...(method === 'get' || method === 'delete' ? {} : { body: objectBody(true, method === 'patch' ? PATCH_TYPES : undefined) }),
  responses: { 200: anObject("The member's answer, unchanged") },
}))
