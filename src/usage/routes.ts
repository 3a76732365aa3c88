import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { requestIdOfRequest } from '../http/request-log'
import { ErrorBody } from '../http/schemas'
import { eventsOfBody } from './body'
import * as contracts from './contracts'
import * as dbaas from './dbaas'
import { ingestEvents } from './ingest'
import {
  ClusterFilterQuery,
  ClustersViewQuery,
  Contract,
  ContractBody,
  ContractListQuery,
  ContractParams,
  DbaasNamespaceParams,
  DbaasQuery,
  DbaasReport,
  DbprodObjectParams,
  DbprodViewParams,
  GeneratedDates,
  IngestResponse,
  MonthlySummaryParams,
  MonthlySummaryQuery,
  MonthlySummaryResponse,
  ObjectParams,
  ObjectQuotaHistory,
  ObjectsViewQuery,
  OrgQuery,
  PdfFile,
  UsageEventsBody,
  UsageView,
  ViewParams,
  ViewTypeQuery,
  YearMonthParams,
} from './schemas'
import * as usage from './service'
import * as views from './views'

const TAGS = ['usage']
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody }

/** The ingestion route, which reads its body as text a piece at a time (http/body.ts `textRoutes`). */
export const INGEST_ROUTE = 'POST /api/v1/usage/events'

/** Usage ingestion and reports (spec "Usage reports", docs/decisions.md §5, §5a); registered in billing mode only. */
export const usageRoutes = (deps: Deps) =>
  new Elysia({ name: 'usage.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .post('/usage/events', ({ scope, body }) => ingestEvents(deps, scope.org.id, eventsOfBody(body)), {
      inOrg: 'send:usage-events',
      scope: 'organization',
      query: OrgQuery,
      body: UsageEventsBody,
      response: { 200: IngestResponse, ...errors, 413: ErrorBody },
      detail: {
        summary: 'Ingest usage events (JSON array or NDJSON); each bad event is rejected alone, repeats are duplicates',
        tags: TAGS,
      },
    })
    .get(
      '/dashboard/monthly-summary/:resourceType',
      async ({ params, query }) => usage.monthlySummary(deps, await usage.usageOrg(deps, query.org), params.resourceType, query),
      {
        signedIn: 'view_usage_analytics:site_admin',
        scope: 'admin',
        params: MonthlySummaryParams,
        query: MonthlySummaryQuery,
        response: { 200: MonthlySummaryResponse, 400: ErrorBody, ...errors },
        detail: { summary: 'Monthly usage of one product for an organization, newest month first', tags: TAGS },
      },
    )
    .get(
      '/dashboard/summary/generated-months',
      async ({ query }) => usage.generatedMonthList(deps, await usage.usageOrg(deps, query.org)),
      {
        signedIn: 'view_usage_analytics:site_admin',
        scope: 'admin',
        query: OrgQuery,
        response: { 200: GeneratedDates, ...errors },
        detail: { summary: 'Months with any usage of the organization, by year', tags: TAGS },
      },
    )
    .get(
      '/dashboard/summary/:year/:month/download',
      async ({ params, query, request }) => {
        const org = await usage.usageOrg(deps, query.org)
        const { pdf, filename } = await usage.monthlyReportPdf(deps, org, params, requestIdOfRequest(request))
        return new Response(pdf as BodyInit, {
          headers: {
            'content-type': 'application/pdf',
            'content-disposition': `attachment; filename="${filename}"`,
            'cache-control': 'no-store',
          },
        })
      },
      {
        signedIn: 'view_usage_analytics:site_admin',
        scope: 'admin',
        params: YearMonthParams,
        query: OrgQuery,
        response: { 200: PdfFile, 400: ErrorBody, ...errors, 503: ErrorBody },
        detail: {
          summary: "The month's usage report as a PDF: cover, totals, six-month charts, per-product and per-cluster tables",
          tags: TAGS,
        },
      },
    )
    .use(viewRoutes(deps))
    .use(contractRoutes(deps))
    .use(dbaasRoutes(deps))

const VIEWS = '/dashboard/summary/:year/:month/usage-report/products'
const dashboard = { signedIn: 'view_usage_analytics:site_admin', scope: 'admin' } as const
const viewResponses = { 200: UsageView, 400: ErrorBody, ...errors }

/** The product views of the spec: clusters and contracts for every product, the rest for dbprod only. */
const viewRoutes = (deps: Deps) => {
  type Ctx = { params: { year: string; month: string; product?: string }; query: { org: string } & views.ViewQuery }
  const context = async ({ params, query }: Ctx) =>
    views.viewContext(deps, await usage.usageOrg(deps, query.org), params.year, params.month, params.product ?? 'dbprod', query)
  return new Elysia({ name: 'usage.views' })
    .use(guard(deps))
    .get(`${VIEWS}/:product/views/clusters-usage-view`, async (c) => views.clustersView(await context(c), c.query), {
      ...dashboard,
      params: ViewParams,
      query: ClustersViewQuery,
      response: viewResponses,
      detail: { summary: 'Usage per cluster for the month; contractID keeps the clusters bound to that contract', tags: TAGS },
    })
    .get(`${VIEWS}/:product/views/contracts-usage-view`, async (c) => views.contractsView(await context(c)), {
      ...dashboard,
      params: ViewParams,
      query: ViewTypeQuery,
      response: viewResponses,
      detail: { summary: 'Contracts of the org for the product running in the month, with the minutes each covers', tags: TAGS },
    })
    .get(`${VIEWS}/dbprod/views/objects-usage-view`, async (c) => views.objectsView(await context(c), c.query), {
      ...dashboard,
      params: DbprodViewParams,
      query: ObjectsViewQuery,
      response: viewResponses,
      detail: { summary: 'Usage per database object for the month, with its daily event counts', tags: TAGS },
    })
    .get(`${VIEWS}/dbprod/views/namespaces-usage-view`, async (c) => views.namespacesView(await context(c), c.query), {
      ...dashboard,
      params: DbprodViewParams,
      query: ClusterFilterQuery,
      response: viewResponses,
      detail: { summary: 'Usage per namespace for the month', tags: TAGS },
    })
    .get(`${VIEWS}/dbprod/views/gks-usage-view`, async (c) => views.gksView(await context(c), c.query), {
      ...dashboard,
      params: DbprodViewParams,
      query: ClusterFilterQuery,
      response: viewResponses,
      detail: { summary: 'Usage per group/kind for the month, with the daily matrix', tags: TAGS },
    })
    .get(`${VIEWS}/dbprod/views/contracts-usage-view`, async (c) => views.contractsView(await context(c)), {
      ...dashboard,
      params: DbprodViewParams,
      query: ViewTypeQuery,
      response: viewResponses,
      detail: { summary: 'Contracts of the org for dbprod running in the month, with the minutes each covers', tags: TAGS },
    })
    .get(`${VIEWS}/dbprod/views/object-quota-history-summaries-view`, async (c) => views.quotaHistoryView(await context(c)), {
      ...dashboard,
      params: DbprodViewParams,
      query: OrgQuery,
      response: viewResponses,
      detail: { summary: "Each object's resource runs within the month", tags: TAGS },
    })
    .get(
      `${VIEWS}/dbprod/views/object-quota-history-summaries-view/clusters/:clusterUID/objects/:objectID`,
      async (c) => views.quotaHistoryView(await context(c), c.params),
      {
        ...dashboard,
        params: DbprodObjectParams,
        query: OrgQuery,
        response: viewResponses,
        detail: { summary: "One object's resource runs within the month", tags: TAGS },
      },
    )
    .get(`${VIEWS}/dbprod/views/objects-cluster-mode-usage-view`, async (c) => views.clusterModeView(await context(c)), {
      ...dashboard,
      params: DbprodViewParams,
      query: OrgQuery,
      response: viewResponses,
      detail: { summary: "Each object's PROD and NON-PROD usage for the month, total and billable", tags: TAGS },
    })
    .get(
      `${VIEWS}/dbprod/views/objects-cluster-mode-usage-view/clusters/:clusterUID/objects/:objectID`,
      async (c) => views.clusterModeView(await context(c), c.params),
      {
        ...dashboard,
        params: DbprodObjectParams,
        query: OrgQuery,
        response: viewResponses,
        detail: { summary: "One object's PROD and NON-PROD usage for the month", tags: TAGS },
      },
    )
    .get(
      '/dashboard/summary/object-quota-history/clusters/:clusterUID/objects/:objectID',
      async ({ params, query }) =>
        views.objectQuotaHistory(deps, await usage.usageOrg(deps, query.org), params.clusterUID, params.objectID),
      {
        ...dashboard,
        params: ObjectParams,
        query: OrgQuery,
        response: { 200: ObjectQuotaHistory, ...errors },
        detail: { summary: "An object's whole resource history (empty segments when unknown)", tags: TAGS },
      },
    )
}

/** Contracts (docs/decisions.md §5a): site administrators only. */
const contractRoutes = (deps: Deps) =>
  new Elysia({ name: 'usage.contracts' })
    .use(guard(deps))
    .get('/admin/usage/contracts', ({ query }) => contracts.listContracts(deps, query.org), {
      signedIn: 'site-admin',
      scope: 'admin',
      query: ContractListQuery,
      response: { 200: t.Array(Contract), ...errors },
      detail: { summary: 'Usage contracts, optionally of one organization', tags: TAGS },
    })
    .post('/admin/usage/contracts', async ({ body, status }) => status(201, await contracts.createContract(deps, body)), {
      signedIn: 'site-admin',
      scope: 'admin',
      body: ContractBody,
      response: { 201: Contract, ...errors },
      detail: { summary: "Record a contract; the org's billable minutes of the product are recounted at once", tags: TAGS },
    })
    .delete(
      '/admin/usage/contracts/:id',
      async ({ params, status }) => {
        await contracts.deleteContract(deps, params.id)
        return status(204, undefined)
      },
      {
        signedIn: 'site-admin',
        scope: 'admin',
        params: ContractParams,
        response: { 204: t.Void(), ...errors },
        detail: { summary: 'Remove a contract; what it covered is recounted', tags: TAGS },
      },
    )

/** DBaaS namespace billing reports: org owners (or the caller's own clusters without org). */
const dbaasRoutes = (deps: Deps) =>
  new Elysia({ name: 'usage.dbaas' })
    .use(guard(deps))
    .get('/dbaas/billing/reports/namespaces', ({ me, query }) => dbaas.namespacesReport(deps, me, query.org), {
      signedIn: 'signed-in',
      scope: 'organization',
      query: DbaasQuery,
      response: { 200: DbaasReport, ...errors },
      detail: { summary: "Billing report of every namespace (org owners; without org, the caller's own clusters)", tags: TAGS },
    })
    .get(
      '/dbaas/billing/reports/clusters/:clusterID/namespaces/:namespaceName',
      ({ me, params, query }) => dbaas.namespaceReport(deps, me, params.clusterID, params.namespaceName, query.org),
      {
        signedIn: 'signed-in',
        scope: 'organization',
        params: DbaasNamespaceParams,
        query: DbaasQuery,
        response: { 200: DbaasReport, ...errors },
        detail: { summary: 'Billing report of one namespace: cluster, namespace and its databases', tags: TAGS },
      },
    )
