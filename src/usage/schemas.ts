import { t } from 'elysia'
import { PRODUCTS } from './events'

const productUnion = t.Union([t.Literal('dbprod'), t.Literal('backupprod'), t.Literal('secretsprod'), t.Literal('ingressprod')], {
  description: 'Product identifier',
})

export const OrgQuery = t.Object({
  org: t.String({ description: 'Organization slug whose usage is meant' }),
})

export const UsageEventsBody = t.Unknown({
  description:
    'A JSON array of usage events, or NDJSON (application/x-ndjson): one event per line. Event: {time (RFC 3339), type: created|updated|deleted|heartbeat, ' +
    'product: dbprod|backupprod|secretsprod|ingressprod, cluster: {uid, name, mode?}, namespace: {uid, name}, object: {group, kind, name, uid}, ' +
    'resources: {requests: {cpu, memory}, limits?: {cpu, memory}}} with Kubernetes quantities for the whole object (docs/decisions.md §5a)',
})

export const IngestResponse = t.Object(
  {
    accepted: t.Integer({ description: 'Events stored by this call' }),
    duplicates: t.Integer({ description: 'Events already stored before (same object uid, time and type), or repeated in the body' }),
    rejected: t.Array(
      t.Object({
        index: t.Integer({ description: '0-based position of the event in the array, or of its line among the non-empty NDJSON lines' }),
        message: t.String({ description: 'Why the event was rejected' }),
      }),
      { description: 'The first 100 bad events (by index), each rejected alone; the others were kept' },
    ),
    rejectedCount: t.Integer({ description: 'How many events were rejected in all' }),
  },
  { description: 'Outcome of an ingestion' },
)

/** The answer to a request on `usage.events.<org>`: the route's outcome, or why nothing was read. */
export const UsageBusAnswer = t.Union(
  [
    IngestResponse,
    t.Object({ error: t.String({ description: 'Why the message was refused as a whole; also in the Nats-Service-Error header' }) }),
  ],
  { description: 'Answer to a request on the message-bus subject usage.events.<org>' },
)
export type UsageBusAnswer = typeof UsageBusAnswer.static

export const MonthlySummaryParams = t.Object({
  resourceType: t.String({ description: `Product identifier: ${PRODUCTS.join(', ')}` }),
})

export const MonthlySummaryQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  period_start: t.Optional(t.String({ description: 'First month, YYYY-MM; default five months before the current one' })),
  period_end: t.Optional(t.String({ description: 'Last month, YYYY-MM; read only with period_start; default the current month' })),
})

export const MonthlySummaryResponse = t.Object(
  {
    resourceType: t.String({ description: 'The product asked for (echo)' }),
    months: t.Array(
      t.Object({
        year: t.Integer({ description: 'UTC year' }),
        month: t.Integer({ minimum: 1, maximum: 12, description: 'UTC month 1-12' }),
        cpuCoreMonth: t.Number({ description: 'Core-minutes / 43,800 (a fixed 730-hour month), two decimals' }),
        memoryGiBMonth: t.Number({ description: 'GiB-minutes / 43,800, two decimals' }),
        instances: t.Integer({ description: 'Objects with any minutes in the month' }),
        cpuChangeFromPrev: t.Optional(
          t.Number({
            description:
              'Percent change against the next older row returned; 0 when both are 0, 100 when only the older is 0; absent on the oldest row',
          }),
        ),
        memoryChangeFromPrev: t.Optional(t.Number({ description: 'As cpuChangeFromPrev, for memory' })),
      }),
      { description: 'Generated months of the window, most recent first' },
    ),
  },
  { title: 'MonthlySummaryResponse' },
)

export const GeneratedDates = t.Object(
  {
    yearMonthList: t.Record(t.String(), t.Array(t.String()), {
      description: 'Year → English month names with any usage event, in calendar order',
    }),
  },
  { title: 'GeneratedDates' },
)

export const YearMonthParams = t.Object({
  year: t.String({ description: 'Four-digit year' }),
  month: t.String({ description: 'Month: 1-12 with or without a leading zero, an English month name or its three-letter abbreviation' }),
})

export const PdfFile = t.Any({ description: 'application/pdf document' })

const amount = t.Object({
  cpuCoreMonth: t.Number({ description: 'Core-minutes / 43,800, two decimals' }),
  memoryGiBMonth: t.Number({ description: 'GiB-minutes / 43,800, two decimals' }),
})

const UsageAmounts = t.Object(
  {
    cpuCoreMinutes: t.Number({ description: 'Σ cores × minutes, two decimals' }),
    memoryGiBMinutes: t.Number({ description: 'Σ GiB × minutes, two decimals' }),
    cpuCoreMonth: t.Number({ description: 'cpuCoreMinutes / 43,800 (a fixed 730-hour month), two decimals' }),
    memoryGiBMonth: t.Number({ description: 'memoryGiBMinutes / 43,800, two decimals' }),
    prod: t.Object(amount.properties, { description: 'Minutes on clusters in mode prod' }),
    nonProd: t.Object(amount.properties, { description: 'Minutes on clusters in any other mode or none' }),
  },
  { description: 'Usage of a row: total or billable minutes as view_type says' },
)

export const UsageView = t.Object(
  {
    org: t.String({ description: 'Organization slug' }),
    year: t.Integer({ description: 'UTC year' }),
    month: t.Integer({ description: 'UTC month 1-12' }),
    monthName: t.String({ description: 'English month name' }),
    product: t.String({ description: 'Product identifier' }),
    view: t.String({
      description: 'objects | clusters | namespaces | gks | contracts | object-quota-history-summaries | objects-cluster-mode',
    }),
    viewType: t.Union([t.Literal('total'), t.Literal('billable')], {
      description: 'total: every minute; billable: minutes covered by a paid contract of the org for the product',
    }),
    unit: t.Object(
      {
        cpu: t.String({ description: 'Unit of *CoreMonth fields' }),
        memory: t.String({ description: 'Unit of *GiBMonth fields' }),
        minutes: t.String({ description: 'Unit of *Minutes fields' }),
      },
      { title: 'Units' },
    ),
    totals: UsageAmounts,
    items: t.Array(t.Record(t.String(), t.Unknown()), {
      description:
        "Rows by the view's dimension. objects: {objectID, name, group, kind, clusterUID, clusterName, namespace, namespaceUID, usage, eventCount, dailyEventCount {YYYY-MM-DD: n}}; " +
        'clusters: {clusterUID, clusterName, modes, objects, usage}; namespaces: {clusterUID, namespace, namespaceUID, objects, usage}; gks: {group, kind, clusters, objects, usage}; ' +
        'contracts: {contractID, kind, start, end, clusterUIDs, objects, usage (the minutes the contract covers)}; object-quota-history-summaries: {objectID, name, group, kind, clusterUID, namespace, ' +
        'segments [{start, end, cpuCores, memoryGiB, clusterMode}], usage}; objects-cluster-mode: {objectID, name, kind, clusterUID, clusterName, total, billable}',
    }),
    daily: t.Optional(
      t.Object(
        {
          days: t.Array(t.String(), { description: 'Every day of the month, YYYY-MM-DD' }),
          series: t.Array(
            t.Object({
              group: t.String({ description: 'API group' }),
              kind: t.String({ description: 'Kind' }),
              cpuCoreMinutes: t.Array(t.Number(), { description: 'Per day' }),
              memoryGiBMinutes: t.Array(t.Number(), { description: 'Per day' }),
            }),
            { description: 'One series per group/kind' },
          ),
        },
        { description: 'gks view: the total monthly usage matrix' },
      ),
    ),
    billable: t.Optional(UsageAmounts),
  },
  { title: 'UsageView', description: "One envelope for every view (docs/decisions.md §5a; shapes are this implementation's)" },
)

export const ViewParams = t.Object({
  year: t.String({ description: 'Four-digit year' }),
  month: t.String({ description: 'Month: 1-12, an English month name or its three-letter abbreviation' }),
  product: t.String({ description: 'Product identifier' }),
})

export const DbprodViewParams = t.Object({
  year: t.String({ description: 'Four-digit year' }),
  month: t.String({ description: 'Month: 1-12, an English month name or its three-letter abbreviation' }),
})

export const DbprodObjectParams = t.Object({
  year: t.String({ description: 'Four-digit year' }),
  month: t.String({ description: 'Month' }),
  clusterUID: t.String({ description: 'Cluster uid (its kube-system namespace uid)' }),
  objectID: t.String({ description: 'Object uid' }),
})

export const ObjectParams = t.Object({
  clusterUID: t.String({ description: 'Cluster uid' }),
  objectID: t.String({ description: 'Object uid' }),
})

const viewTypeQuery = t.Optional(t.String({ description: 'total (default) or billable; anything else is 400' }))

export const ObjectsViewQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  view_type: viewTypeQuery,
  group: t.Optional(t.String({ description: 'Only objects of this API group' })),
  kind: t.Optional(t.String({ description: 'Only objects of this kind' })),
  clusterUID: t.Optional(t.String({ description: 'Only objects on this cluster' })),
  namespace: t.Optional(t.String({ description: 'Only objects in namespaces of this name' })),
  namespaceUID: t.Optional(t.String({ description: 'Only objects in this namespace' })),
})

export const ClustersViewQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  view_type: viewTypeQuery,
  group: t.Optional(t.String({ description: 'Only objects of this API group (dbprod)' })),
  kind: t.Optional(t.String({ description: 'Only objects of this kind (dbprod)' })),
  contractID: t.Optional(t.String({ description: 'Only clusters bound to this contract (integer; else 400)' })),
})

export const ClusterFilterQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  view_type: viewTypeQuery,
  clusterUID: t.Optional(t.String({ description: 'Only this cluster' })),
})

export const ViewTypeQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  view_type: viewTypeQuery,
})

export const ObjectQuotaHistory = t.Object(
  {
    org: t.String({ description: 'Organization slug' }),
    clusterUID: t.String({ description: 'Cluster uid asked for' }),
    objectID: t.String({ description: 'Object uid asked for' }),
    name: t.Union([t.String(), t.Null()], { description: 'Object name; null when no such object reported usage' }),
    product: t.Union([t.String(), t.Null()], { description: 'Product of the object' }),
    group: t.Optional(t.String({ description: 'API group' })),
    kind: t.Optional(t.String({ description: 'Kind' })),
    namespace: t.Optional(t.String({ description: 'Namespace' })),
    segments: t.Array(
      t.Object({
        start: t.String({ description: 'RFC 3339' }),
        end: t.String({ description: 'RFC 3339; for a live object, now' }),
        cpuCores: t.Number({ description: 'Cores (requests, else limits)' }),
        memoryGiB: t.Number({ description: 'GiB' }),
        clusterMode: t.String({ description: 'PROD or NON-PROD' }),
      }),
      { description: 'Constant-resource runs, oldest first' },
    ),
  },
  { title: 'ObjectQuotaHistoryView', description: "The UsageView of an object's resource (quota) history" },
)

export const ContractBody = t.Object({
  org: t.String({ description: 'Organization slug' }),
  product: productUnion,
  kind: t.Union([t.Literal('paid'), t.Literal('free')], { description: 'paid: its minutes are billable' }),
  start: t.String({ description: 'RFC 3339' }),
  end: t.Optional(t.String({ description: 'RFC 3339; absent: open-ended' })),
  clusterUIDs: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 253 }), {
      maxItems: 1000,
      description: 'Clusters covered; absent: every cluster of the org',
    }),
  ),
})

export const Contract = t.Object(
  {
    id: t.Integer({ description: 'Contract id' }),
    ...ContractBody.properties,
  },
  { description: 'A usage contract' },
)

export const ContractParams = t.Object({ id: t.Numeric({ description: 'Contract id' }) })
export const ContractListQuery = t.Object({ org: t.Optional(t.String({ description: "Only this organization's contracts" })) })

export const DbaasQuery = t.Object({
  org: t.Optional(
    t.String({ description: "Organization slug; the caller must own it. Absent: the caller's own clusters in orgs they own" }),
  ),
})
export const DbaasNamespaceParams = t.Object({
  clusterID: t.String({ description: 'Cluster uid' }),
  namespaceName: t.String({ description: 'Namespace name' }),
})
export const DbaasReport = t.Record(t.String(), t.Unknown(), {
  description:
    'UsageView. namespaces: {org, namespaces: [{org, clusterUID, clusterName, namespace, namespaceUID, databases, firstSeen, lastSeen, currentMonth}]}; ' +
    'one namespace: {clusterInfo, namespaceInfo, databases: [{org, databaseInfo, resources, created, lastSeen, deleted, currentMonth}]}. Objects deleted over six months ago are left out',
})
