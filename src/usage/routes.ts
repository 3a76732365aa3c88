import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { eventsOfBody, readNdjsonBody } from './body'
import { ingestEvents } from './ingest'
import { pdfPrinter } from './pdf/printer'
import { GeneratedDates, PdfFile, YearMonthParams, IngestResponse, MonthlySummaryParams, MonthlySummaryQuery, MonthlySummaryResponse, OrgQuery, UsageEventsBody } from './schemas'
import * as usage from './service'

const TAGS = ['usage']
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody }

/** Usage ingestion and reports (spec "Usage reports", decisions §5, §5a); registered in billing mode only. */
export const usageRoutes = (deps: Deps) => {
  const printer = pdfPrinter({ chromiumPath: deps.config.chromiumPath, ...deps.config.pdfRenders })
  return new Elysia({ name: 'usage.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .onStop(() => printer.close())
    .post('/usage/events', ({ scope, body }) => ingestEvents(deps, scope.org.id, eventsOfBody(body)), {
      permission: 'send:usage-events',
      scope: 'organization',
      query: OrgQuery,
      parse: readNdjsonBody(deps.config.maxBodyBytes),
      body: UsageEventsBody,
      response: { 200: IngestResponse, ...errors, 413: ErrorBody },
      detail: { summary: 'Ingest usage events (JSON array or NDJSON); each bad event is rejected alone, repeats are duplicates', tags: TAGS },
    })
    .get('/dashboard/monthly-summary/:resourceType', async ({ params, query }) =>
      usage.monthlySummary(deps, await usage.usageOrg(deps, query.org), params.resourceType, query), {
      permission: 'view_usage_analytics:site_admin',
      scope: 'admin',
      params: MonthlySummaryParams,
      query: MonthlySummaryQuery,
      response: { 200: MonthlySummaryResponse, 400: ErrorBody, ...errors },
      detail: { summary: 'Monthly usage of one product for an organization, newest month first', tags: TAGS },
    })
    .get('/dashboard/summary/generated-months', async ({ query }) => usage.generatedMonthList(deps, await usage.usageOrg(deps, query.org)), {
      permission: 'view_usage_analytics:site_admin',
      scope: 'admin',
      query: OrgQuery,
      response: { 200: GeneratedDates, ...errors },
      detail: { summary: 'Months with any usage of the organization, by year', tags: TAGS },
    })
    .get('/dashboard/summary/:year/:month/download', async ({ params, query }) => {
      const { pdf, filename } = await usage.monthlyReportPdf(deps, printer, await usage.usageOrg(deps, query.org), params.year, params.month)
      return new Response(pdf as BodyInit, { headers: { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store' } })
    }, {
      permission: 'view_usage_analytics:site_admin',
      scope: 'admin',
      params: YearMonthParams,
      query: OrgQuery,
      response: { 200: PdfFile, 400: ErrorBody, ...errors, 503: ErrorBody },
      detail: { summary: 'The month\'s usage report as a PDF: cover, totals, six-month charts, per-product and per-cluster tables', tags: TAGS },
    })
}
