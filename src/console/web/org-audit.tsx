import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { type AuditEvent, auditSummary } from './audit-event'
import { PAGE_SIZE, totalOf } from './pager'

/**
 * The org's audit trail (owners; docs/api/audit.md), newest first, a page at a time with "Newer events" and
 * "Older events". It is asked again after each change made on the page (`changes`), which records an event.
 */
export function OrgAudit({ org, changes }: { org: string; changes: number }) {
  const [page, setPage] = useState(1)
  // What the table shows: the page it was answered for, so the caption never names a page still loading.
  const [shown, setShown] = useState<{ page: number; pages: number; events: AuditEvent[] }>({ page: 1, pages: 1, events: [] })
  const [note, setNote] = useState<string>()
  useEffect(() => {
    const query = { page: String(page), limit: String(PAGE_SIZE) }
    api.GET('/api/v1/orgs/{org}/audit', { params: { path: { org }, query } }).then(({ data, error, response }) => {
      if (!data) return response.status !== 401 && setNote(problemOf(error, response.status).message)
      setNote(undefined)
      const pages = Math.max(1, Math.ceil(totalOf(response) / PAGE_SIZE))
      setShown({ page, pages, events: data })
    })
  }, [org, page, changes])
  if (note) return <p>{note}</p>
  const { events, pages } = shown
  return (
    <>
      {events.length === 0 ? (
        <p>No events yet.</p>
      ) : (
        <table class="audit">
          <caption>
            Events of {org}, newest first: page {shown.page} of {pages}
          </caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id}>
                <td>
                  <time dateTime={event.time}>{new Date(event.time).toLocaleString()}</time>
                </td>
                <td>{event.actor?.login ?? 'anonymous'}</td>
                <td>
                  {auditSummary(event)}
                  {event.cluster ? ` on ${event.cluster}` : ''} → {event.outcome.status} {event.outcome.result}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="actions">
        <button type="button" class="secondary" disabled={shown.page <= 1} onClick={() => setPage(shown.page - 1)}>
          Newer events
        </button>
        <button type="button" class="secondary" disabled={shown.page >= pages} onClick={() => setPage(shown.page + 1)}>
          Older events
        </button>
      </div>
    </>
  )
}
