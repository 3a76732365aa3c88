import { t } from 'elysia'

/** Page size when neither the request nor the user's saved setting names one (docs/decisions.md §1). */
export const DEFAULT_PAGE_SIZE = 30
/** Largest page a client may ask for; larger requests are clamped. */
export const MAX_PAGE_SIZE = 50

export const PageQuery = t.Object({
  page: t.Optional(t.String({ description: 'Page number, 1-based; values below 1 or not a number mean 1' })),
  limit: t.Optional(
    t.String({
      description: `Page size; default ${DEFAULT_PAGE_SIZE} (or your saved page size), at most ${MAX_PAGE_SIZE} (larger is clamped)`,
    }),
  ),
})

export type PageQuery = typeof PageQuery.static

export interface Page {
  page: number
  limit: number
  offset: number
}

/** A positive integer from a query value; junk, zero and negatives give 0 (Gitea parses junk as 0). */
function positiveInt(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : ''
  if (!/^\d{1,9}$/.test(text)) return 0
  return Number(text)
}

/**
 * Reads `page` (1-based; ≤0 or junk → 1) and `limit` (≤0, junk or missing → the user's saved page
 * size, else 30; above 50 → 50) from a query object.
 */
export function pageOf(query: Record<string, unknown>, user?: { pageSize: number }): Page {
  const page = positiveInt(query.page) || 1
  const saved = user && user.pageSize > 0 ? Math.min(user.pageSize, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE
  const limit = Math.min(positiveInt(query.limit) || saved, MAX_PAGE_SIZE)
  return { page, limit, offset: (page - 1) * limit }
}

/**
 * Gitea's `Link` header: comma-joined `<url>; rel="x"` entries for next, last, first, prev (each
 * only when meaningful), the query re-encoded with sorted keys and `page` replaced.
 */
function linkHeader(url: URL, publicUrl: string, total: number, page: number, limit: number): string {
  const lastPage = Math.max(1, Math.ceil(total / limit))
  const at = (n: number) => {
    const params = new URLSearchParams(url.search)
    params.set('page', String(n))
    params.sort()
    return `<${publicUrl}${url.pathname}?${params.toString()}>`
  }
  const links: string[] = []
  if (total > page * limit) links.push(`${at(page + 1)}; rel="next"`)
  if (page < lastPage) links.push(`${at(lastPage)}; rel="last"`)
  if (page > 1) links.push(`${at(1)}; rel="first"`, `${at(page - 1)}; rel="prev"`)
  return links.join(',')
}

/** One page of a list and the size of the whole list: what every paginated service returns. */
export interface Paged<T> {
  items: T[]
  total: number
}

/** What `answerPage` reads of a route's context. */
export interface PageContext {
  query: Record<string, unknown>
  request: Request
  set: { headers: Record<string, string | number> }
}

/**
 * Answers a paginated list route: the page from `page`/`limit` (the caller's saved page size by
 * default), `list` for that page, then `X-Total-Count` and `Link` (next, last, first, prev) on
 * every paginated list alike. Returns the page's items.
 */
export async function answerPage<T>(
  publicUrl: string,
  { query, request, set }: PageContext,
  caller: { pageSize: number } | undefined,
  list: (page: Page) => Promise<Paged<T>>,
): Promise<T[]> {
  const page = pageOf(query, caller)
  const { items, total } = await list(page)
  set.headers['x-total-count'] = String(total)
  const link = linkHeader(new URL(request.url), publicUrl, total, page.page, page.limit)
  if (link) set.headers.link = link
  set.headers['access-control-expose-headers'] = 'X-Total-Count, Link'
  return items
}
