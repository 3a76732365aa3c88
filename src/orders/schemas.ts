import { t } from 'elysia'

export const ORDER_API_VERSION = 'releases.x-helm.dev/v1alpha1'
// Helm's own release-name rule (a DNS-1123 subdomain of at most 53 characters).
const RELEASE_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
const NAMESPACE = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'

const SourceRef = t.Object(
  {
    apiGroup: t.Optional(t.String({ maxLength: 253, description: "Accepted and ignored (the original's FluxCD group)" })),
    kind: t.Optional(
      t.String({ maxLength: 63, description: 'HelmRepository (default) names a chart source; Legacy takes `name` as the repository URL' }),
    ),
    namespace: t.Optional(t.String({ maxLength: 63, description: 'Accepted and ignored' })),
    name: t.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The chart source name (admin/chart-sources), or for kind Legacy the repository URL',
    }),
  },
  { description: 'Where the chart comes from' },
)

const JsonPatchOperation = t.Object(
  {
    op: t.Union([t.Literal('add'), t.Literal('remove'), t.Literal('replace'), t.Literal('move'), t.Literal('copy'), t.Literal('test')], {
      description: 'RFC 6902 operation',
    }),
    path: t.String({ maxLength: 1024, description: 'JSON pointer into the chart values' }),
    from: t.Optional(t.String({ maxLength: 1024, description: 'Source pointer of move and copy' })),
    value: t.Optional(t.Unknown({ description: 'Value of add, replace and test' })),
  },
  { description: 'One JSON Patch operation' },
)

const GroupVersionResource = t.Object({
  group: t.String({ maxLength: 253, description: 'API group, "" for the core group' }),
  version: t.String({ maxLength: 63, description: 'API version' }),
  resource: t.String({ maxLength: 253, description: 'Resource, plural' }),
})

const WaitFlags = t.Object(
  {
    resource: t.Object(
      {
        group: t.String({ maxLength: 253, description: 'API group' }),
        resource: t.String({ maxLength: 253, description: 'Resource, plural' }),
      },
      { description: 'What to wait for' },
    ),
    labels: t.Optional(
      t.Object(
        { matchLabels: t.Optional(t.Record(t.String({ maxLength: 317 }), t.String({ maxLength: 63 }), { description: 'Label selector' })) },
        { description: 'Which objects' },
      ),
    ),
    all: t.Optional(t.Boolean({ description: 'Wait for all objects of the resource' })),
    timeout: t.Optional(t.String({ maxLength: 32, description: 'Duration, e.g. 5m' })),
    for: t.Optional(t.String({ maxLength: 256, description: 'kubectl wait condition, e.g. condition=Ready' })),
  },
  { description: 'A `kubectl wait` the install scripts run after the package' },
)

export const ChartSelection = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 250, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Chart name' }),
    version: t.Optional(
      t.String({
        maxLength: 128,
        pattern: '^[0-9A-Za-z.+_~^*<>=|, -]*$',
        description: 'Exact version, a semver range such as `~1.2`, or "" for the latest stable version',
      }),
    ),
    releaseName: t.String({ minLength: 1, maxLength: 53, pattern: RELEASE_NAME, description: 'Helm release name' }),
    namespace: t.String({ minLength: 1, maxLength: 63, pattern: NAMESPACE, description: 'Namespace to install into' }),
    sourceRef: t.Optional(SourceRef),
    url: t.Optional(
      t.String({
        maxLength: 2048,
        pattern: '^(https?|oci)://[^/\\s]',
        description: 'Instead of sourceRef: a repository URL, a chart archive URL (…/x-1.0.0.tgz) or an oci:// reference',
      }),
    ),
    valuesFile: t.Optional(
      t.String({
        maxLength: 255,
        pattern: '^[A-Za-z0-9_-][A-Za-z0-9._/-]*$',
        description: 'A values file inside the chart that valuesPatch applies to (default values.yaml)',
      }),
    ),
    valuesPatch: t.Optional(t.Array(JsonPatchOperation, { maxItems: 1000, description: 'RFC 6902 patch applied to the chart values' })),
    values: t.Optional(
      t.Record(t.String(), t.Unknown(), { description: 'Values merged over the chart defaults (when there is no valuesPatch)' }),
    ),
    resources: t.Optional(
      t.Object(
        {
          owned: t.Optional(
            t.Array(GroupVersionResource, { maxItems: 100, description: 'CRDs the chart brings; the scripts wait for them' }),
          ),
          required: t.Optional(t.Array(GroupVersionResource, { maxItems: 100, description: 'Resources the chart needs' })),
        },
        { description: 'Resources the chart owns and requires' },
      ),
    ),
    waitFors: t.Optional(t.Array(WaitFlags, { maxItems: 100, description: 'Waits after installing' })),
  },
  { description: 'One chart of the order' },
)
export type ChartSelection = typeof ChartSelection.static

export const OrderPackage = t.Object({ chart: ChartSelection }, { description: 'One package of the order' })
export type OrderPackage = typeof OrderPackage.static

const OrderMetadata = t.Object(
  {
    name: t.String({ description: "Defaults to the first package's release name" }),
    uid: t.String({ description: 'Assigned by the server; the {id} of the order routes' }),
    creationTimestamp: t.String({ format: 'date-time', description: 'When the order was created (RFC 3339, seconds)' }),
  },
  { description: 'Server-assigned metadata' },
)

const OrderSpecFields = {
  packages: t.Optional(t.Array(OrderPackage, { maxItems: 50, description: "The charts to deploy (the contract's name)" })),
  items: t.Optional(
    t.Array(OrderPackage, { maxItems: 50, description: "The same list under the original's wire name; echoed under the name sent" }),
  ),
  kubeVersion: t.Optional(t.String({ maxLength: 128, description: 'Kubernetes version constraint (kept, informational)' })),
}

export const OrderInput = t.Object(
  {
    apiVersion: t.Optional(t.String({ description: `Ignored; answered as ${ORDER_API_VERSION}` })),
    kind: t.Optional(t.String({ description: 'Ignored; answered as Order' })),
    metadata: t.Optional(
      t.Object(
        {
          name: t.Optional(
            t.String({ maxLength: 253, pattern: RELEASE_NAME, description: 'Order name; the first release name when omitted' }),
          ),
        },
        { description: "Only the name is taken; uid and creationTimestamp are the server's" },
      ),
    ),
    spec: t.Optional(t.Object(OrderSpecFields, { description: 'The package list, as `packages` or `items`' })),
  },
  { description: 'A deployment order' },
)
export type OrderInput = typeof OrderInput.static

export const Order = t.Object(
  {
    apiVersion: t.Literal(ORDER_API_VERSION, { description: `Always ${ORDER_API_VERSION}` }),
    kind: t.Literal('Order', { description: 'Always Order' }),
    metadata: OrderMetadata,
    spec: t.Object(OrderSpecFields, { description: 'The packages as sent' }),
    status: t.Object({}, { description: 'Always {}' }),
  },
  { title: 'Order', description: 'A stored deployment order' },
)
export type Order = typeof Order.static

export const OrderParams = t.Object({ id: t.String({ description: 'The order uid' }) })
export const OrderFileParams = t.Object({
  id: t.String({ description: 'The order uid' }),
  file: t.String({ description: 'File name as the yaml script and render/resources name it' }),
})

export const ResourcesQuery = t.Object({
  skipCRDs: t.Optional(t.String({ description: "true drops each chart's CRDs" })),
  format: t.Optional(t.String({ description: 'yaml (default; anything but json) or json: how each `data` string is marshalled' })),
})

const BucketObject = {
  url: t.String({ description: 'Where the file is served' }),
  key: t.String({ description: 'Path of the file below the orders URL' }),
}

export const ChartTemplateOutput = t.Object(
  {
    name: t.String({ description: 'Chart name' }),
    version: t.String({ description: 'Chart version rendered' }),
    sourceRef: t.Object(
      {
        apiGroup: t.Optional(t.String({ description: 'As sent' })),
        kind: t.Optional(t.String({ description: 'As sent' })),
        namespace: t.Optional(t.String({ description: 'As sent' })),
        name: t.String({ description: 'Source name or URL' }),
      },
      { description: 'Where the chart came from' },
    ),
    releaseName: t.String({ description: 'Helm release name' }),
    namespace: t.String({ description: 'Namespace' }),
    crds: t.Array(
      t.Object({
        ...BucketObject,
        filename: t.String({ description: "Helm's CRD path, <chart>/crds/<file>" }),
        data: t.String({ description: 'The CRD entry marshalled in the requested format' }),
      }),
      { description: 'CRDs of the chart; [] with skipCRDs=true' },
    ),
    manifest: t.Object(BucketObject, { description: 'The package manifest as a file' }),
    resources: t.Array(
      t.Object({
        filename: t.String({ description: 'snake_case kind, disambiguated by name and group' }),
        key: t.String({ description: 'camelCase group+kind and name suffix' }),
        data: t.String({ description: 'The object marshalled in the requested format' }),
      }),
      { description: 'Objects of the manifest, hooks included' },
    ),
  },
  { description: 'One package, rendered and converted' },
)

export const ScriptRef = t.Object(
  {
    os: t.String({ description: 'linux or darwin' }),
    url: t.String({ description: 'Where the script is served' }),
    command: t.String({ description: 'curl -fsSL <url> | bash' }),
    script: t.String({ description: 'The script text' }),
  },
  { description: 'An install script' },
)

export const OrderListQuery = t.Object({
  page: t.Optional(t.String({ description: 'Page number, 1-based' })),
  limit: t.Optional(t.String({ description: 'Page size, default 30, at most 50' })),
})
