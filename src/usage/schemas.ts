import { t } from 'elysia'
import { PRODUCTS } from './events'

const productUnion = t.Union(PRODUCTS.map((p) => t.Literal(p)), { description: 'Product identifier' })

export const OrgQuery = t.Object({
  org: t.String({ description: 'Organization slug whose usage is meant' }),
})

export const UsageEventsBody = t.Unknown({
  description: 'A JSON array of usage events, or NDJSON (application/x-ndjson): one event per line. Event: {time (RFC 3339), type: created|updated|deleted|heartbeat, '
    + 'product: dbprod|backupprod|secretsprod|ingressprod, cluster: {uid, name, mode?}, namespace: {uid, name}, object: {group, kind, name, uid}, '
    + 'resources: {requests: {cpu, memory}, limits?: {cpu, memory}}} with Kubernetes quantities for the whole object (decisions §5a)',
})

export const IngestResponse = t.Object({
  accepted: t.Integer({ description: 'Events stored by this call' }),
  duplicates: t.Integer({ description: 'Events already stored before (same object uid, time and type), or repeated in the body' }),
  rejected: t.Array(t.Object({
    index: t.Integer({ description: '0-based position of the event in the array, or of its line among the non-empty NDJSON lines' }),
    message: t.String({ description: 'Why the event was rejected' }),
  }), { description: 'Bad events, each rejected alone; the others were kept' }),
}, { description: 'Outcome of an ingestion' })

export const MonthlySummaryParams = t.Object({
  resourceType: t.String({ description: `Product identifier: ${PRODUCTS.join(', ')}` }),
})

export const MonthlySummaryQuery = t.Object({
  org: t.String({ description: 'Organization slug' }),
  period_start: t.Optional(t.String({ description: 'First month, YYYY-MM; default five months before the current one' })),
  period_end: t.Optional(t.String({ description: 'Last month, YYYY-MM; read only with period_start; default the current month' })),
})

export const MonthlySummaryResponse = t.Object({
  resourceType: t.String({ description: 'The product asked for (echo)' }),
  months: t.Array(t.Object({
    year: t.Integer({ description: 'UTC year' }),
    month: t.Integer({ minimum: 1, maximum: 12, description: 'UTC month 1-12' }),
    cpuCoreMonth: t.Number({ description: 'Core-minutes / 43,800 (a fixed 730-hour month), two decimals' }),
    memoryGiBMonth: t.Number({ description: 'GiB-minutes / 43,800, two decimals' }),
    instances: t.Integer({ description: 'Objects with any minutes in the month' }),
    cpuChangeFromPrev: t.Optional(t.Number({ description: 'Percent change against the next older row returned; 0 when both are 0, 100 when only the older is 0; absent on the oldest row' })),
    memoryChangeFromPrev: t.Optional(t.Number({ description: 'As cpuChangeFromPrev, for memory' })),
  }), { description: 'Generated months of the window, most recent first' }),
}, { description: 'MonthlySummaryResponse' })

export const GeneratedDates = t.Object({
  yearMonthList: t.Record(t.String(), t.Array(t.String()), { description: 'Year → English month names with any usage event, in calendar order' }),
}, { description: 'GeneratedDates' })

export const ProductSchema = productUnion

export const YearMonthParams = t.Object({
  year: t.String({ description: 'Four-digit year' }),
  month: t.String({ description: 'Month: 1-12 with or without a leading zero, an English month name or its three-letter abbreviation' }),
})

export const PdfFile = t.Any({ description: 'application/pdf document' })
