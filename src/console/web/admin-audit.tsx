import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { type AuditEvent, auditSummary } from './audit-event'
import { fieldValue } from './form'
import { ErrorNotice } from './layout'
import type { operations } from './openapi'
import { PAGE_SIZE, Pager, totalOf } from './pager'

type AuditFilters = Omit<NonNullable<operations['getAdminAudit']['parameters']['query']>, 'page' | 'limit'>

const KINDS = ['api', 'kubernetes', 'signin', 'cli', 'agent'] as const
const RESULTS = ['allowed', 'refused', 'failed'] as const
const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/** The filled filters of the form: an empty field filters nothing. */
function filtersOf(form: HTMLFormElement): AuditFilters {
  const filled = (name: string) => fieldValue(form, name).trim() || undefined
  return {
    actor: filled('actor'),
    kind: filled('kind') as AuditFilters['kind'],
    cluster: filled('cluster'),
    result: filled('result') as AuditFilters['result'],
    since: filled('since'),
    until: filled('until'),
  }
}

/** A text filter that may stay empty, with its label, an optional hint and what the API said about it. */
function FilterField({ id, label, hint, error }: { id: string; label: string; hint?: string; error?: string }) {
  const described = [hint, error ? `${id}-error` : undefined].filter(Boolean).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={id}
        type="text"
        autocomplete="off"
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {error && (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      )}
    </div>
  )
}

/** A filter chosen from a list, "Any" first. */
function FilterChoice({ id, label, options }: { id: string; label: string; options: readonly string[] }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={id}>
        <option value="">Any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  )
}

/**
 * The audit trail of `/admin` (docs/decisions.md §8, §11): `GET /admin/audit`, newest first and paged, narrowed by
 * actor, kind, cluster, result and a time range (the API's own filters, combined with AND).
 */
export function AdminAudit() {
  const [events, setEvents] = useState<AuditEvent[]>()
  const [filters, setFilters] = useState<AuditFilters>({})
  const [page, setPage] = useState(1)
  const [total, setTotal] = useState(0)
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)

  const load = async (at: number, chosen: AuditFilters) => {
    setProblem(NO_PROBLEM)
    const { data, error, response } = await api.GET('/api/v1/admin/audit', {
      params: { query: { ...chosen, page: String(at), limit: String(PAGE_SIZE) } },
    })
    if (!data) return setProblem(problemOf(error, response.status))
    setEvents(data)
    setTotal(totalOf(response))
    setPage(at)
    setFilters(chosen)
  }
  useEffect(() => {
    load(1, {})
  }, [])

  const filter = (event: Event) => {
    event.preventDefault()
    load(1, filtersOf(event.currentTarget as HTMLFormElement))
  }

  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit trail</h2>
      <ErrorNotice message={problem.fields.since || problem.fields.until ? undefined : problem.message || undefined} />
      <form class="filters" aria-label="Audit filters" onSubmit={filter}>
        <FilterField id="actor" label="Actor" />
        <FilterChoice id="kind" label="Kind" options={KINDS} />
        <FilterField id="cluster" label="Cluster (owner/name)" />
        <FilterChoice id="result" label="Result" options={RESULTS} />
        <FilterField id="since" label="From" hint="time-hint" error={problem.fields.since} />
        <FilterField id="until" label="Until" hint="time-hint" error={problem.fields.until} />
        <p id="time-hint" class="hint">
          Times in UTC as RFC 3339, for example 2026-11-28T09:00:00Z; From is included, Until is not.
        </p>
        <button type="submit">Filter</button>
      </form>
      {events && events.length === 0 && <p>No events match.</p>}
      {events && events.length > 0 && (
        <table class="audit wrap">
          <caption>Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Kind</th>
              <th scope="col">Actor</th>
              <th scope="col">What</th>
              <th scope="col">Cluster</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id}>
                <td data-label="Time (UTC)">{event.time.slice(0, 19).replace('T', ' ')}</td>
                <td data-label="Kind">{event.kind}</td>
                <td data-label="Actor">{event.actor?.login ?? 'anonymous'}</td>
                <td data-label="What">{auditSummary(event)}</td>
                <td data-label="Cluster">{event.cluster ?? '–'}</td>
                <td data-label="Result">
                  {event.outcome.result} ({event.outcome.status})
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {events && <Pager label="Audit events" page={page} total={total} go={(at) => load(at, filters)} />}
    </section>
  )
}
