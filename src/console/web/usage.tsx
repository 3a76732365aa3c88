import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type MonthRow = components['schemas']['MonthlySummaryResponse']['months'][number]

const PRODUCTS = ['dbprod', 'backupprod', 'secretsprod', 'ingressprod'] as const
/** English month names, as `generated-months` spells them (the browser's own calendar, not a copied list). */
const MONTH_NAMES = Array.from({ length: 12 }, (_, i) =>
  new Date(Date.UTC(2000, i)).toLocaleString('en', { month: 'long', timeZone: 'UTC' }),
)
/** The monthly summary answers at most 24 months at once (docs/api/usage.md). */
const SUMMARY_WINDOW = 24

interface Month {
  year: number
  month: number
  /** Each product's row of the month; absent for a month older than the summary's window. */
  products: Partial<Record<(typeof PRODUCTS)[number], MonthRow>>
}

/** One org's months with usage, newest first, or why they cannot be shown. */
interface OrgUsage {
  org: string
  months: Month[]
  problem?: string
}

const yearMonth = ({ year, month }: { year: number; month: number }) => `${year}-${String(month).padStart(2, '0')}`

/** What a refusal means on this page: the reports are the site admins' (docs/decisions.md §5), or billing is off. */
function refusalOf(error: unknown, status: number): string {
  if (status === 403) return 'Only site administrators can read usage reports.'
  if (status === 404) return 'Usage reports are off on this site: it does not run in billing mode.'
  return problemOf(error, status).message
}

/** The months with usage of `org` (`generated-months`) and each product's summary row of them (`monthly-summary`). */
async function usageOf(org: string): Promise<OrgUsage> {
  const generated = await api.GET('/api/v1/dashboard/summary/generated-months', { params: { query: { org } } })
  if (!generated.data) return { org, months: [], problem: refusalOf(generated.error, generated.response.status) }
  const months: Month[] = Object.entries(generated.data.yearMonthList)
    .flatMap(([year, names]) => names.map((name) => ({ year: Number(year), month: MONTH_NAMES.indexOf(name) + 1, products: {} })))
    .sort((a, b) => yearMonth(b).localeCompare(yearMonth(a)))
  if (months.length === 0) return { org, months }
  const window = months.slice(0, SUMMARY_WINDOW)
  const period = { period_start: yearMonth(window[window.length - 1]!), period_end: yearMonth(window[0]!) }
  for (const product of PRODUCTS) {
    const summary = await api.GET('/api/v1/dashboard/monthly-summary/{resourceType}', {
      params: { path: { resourceType: product }, query: { org, ...period } },
    })
    if (!summary.data) return { org, months, problem: refusalOf(summary.error, summary.response.status) }
    for (const row of summary.data.months) {
      const month = months.find((m) => m.year === row.year && m.month === row.month)
      if (month) month.products[product] = row
    }
  }
  return { org, months }
}

/** A month's figures, a row per product, and its report as a PDF: a plain link the browser downloads with the session. */
function MonthUsage({ org, month }: { org: string; month: Month }) {
  const name = `${MONTH_NAMES[month.month - 1]} ${month.year}`
  const id = `usage-${org}-${yearMonth(month)}`
  return (
    <section aria-labelledby={id}>
      <h3 id={id}>{name}</h3>
      <table class="usage wrap">
        <caption>
          Usage of {org} in {name}
        </caption>
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">CPU (core-months)</th>
            <th scope="col">Memory (GiB-months)</th>
            <th scope="col">Objects</th>
          </tr>
        </thead>
        <tbody>
          {PRODUCTS.map((product) => {
            const row = month.products[product]
            return (
              <tr key={product}>
                <td data-label="Product">{product}</td>
                <td data-label="CPU (core-months)">{row ? row.cpuCoreMonth.toFixed(2) : '–'}</td>
                <td data-label="Memory (GiB-months)">{row ? row.memoryGiBMonth.toFixed(2) : '–'}</td>
                <td data-label="Objects">{row ? row.instances : '–'}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <p>
        <a href={`/api/v1/dashboard/summary/${month.year}/${month.month}/download?org=${encodeURIComponent(org)}`}>
          Download PDF
          <span class="visually-hidden">
            {' '}
            of {org}, {name}
          </span>
        </a>
      </p>
    </section>
  )
}

/**
 * `/usage` (docs/decisions.md §5, §11): for each org of the caller, the months with usage, newest first, each with
 * its products' summary (core-months, GiB-months, objects) and a "Download PDF" link to the month's report.
 */
export function UsagePage() {
  const me = useMe()
  const [usage, setUsage] = useState<OrgUsage[]>()
  const [problem, setProblem] = useState<string>()
  useEffect(() => {
    api.GET('/api/v1/user/orgs', { params: { query: { limit: '50' } } }).then(async ({ data, error, response }) => {
      if (!data) return response.status === 401 ? undefined : setProblem(problemOf(error, response.status).message)
      setUsage(await Promise.all(data.map((org) => usageOf(org.username))))
    })
  }, [])
  return (
    <SignedInLayout title="Usage" me={me}>
      <ErrorNotice message={problem} />
      {usage && usage.length === 0 && <p>You belong to no organization, so there is no usage to show.</p>}
      {usage?.map((entry) => (
        <section key={entry.org} aria-labelledby={`org-${entry.org}`}>
          <h2 id={`org-${entry.org}`}>{entry.org}</h2>
          {entry.problem && <p>{entry.problem}</p>}
          {!entry.problem && entry.months.length === 0 && <p>No usage recorded yet.</p>}
          {!entry.problem && entry.months.map((month) => <MonthUsage key={yearMonth(month)} org={entry.org} month={month} />)}
        </section>
      ))}
    </SignedInLayout>
  )
}
