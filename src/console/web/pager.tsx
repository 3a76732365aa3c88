/** The page size of the console's paged tables. */
export const PAGE_SIZE = 20

/** The number of rows a list answer counts in `X-Total-Count` (docs/api/README.md, pagination). */
export const totalOf = (response: Response) => Number(response.headers.get('x-total-count') ?? '0')

/**
 * "Previous page" and "Next page" under a paged table, and where the reader is; `label` names the table, so two
 * pagers on one page are told apart.
 */
export function Pager({ label, page, total, go }: { label: string; page: number; total: number; go: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE))
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => go(page - 1)}>
        Previous page
      </button>
      <span>
        Page {page} of {pages} ({total} in all)
      </span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => go(page + 1)}>
        Next page
      </button>
    </nav>
  )
}
