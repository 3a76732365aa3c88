import { t } from 'elysia'

/** Decisions §1: page 1-based, limit 30 by default and at most 50. */
export const DEFAULT_PAGE_SIZE = 30
export const MAX_PAGE_SIZE = 50

export const PageQuery = t.Object({
  page: t.Optional(t.String({ description: 'Page number, 1-based; values below 1 or not a number mean 1' })),
  limit: t.Optional(t.String({ description: `Page size; default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE} (larger is clamped)` })),
})

export interface Page {
  page: number
  limit: number
  offset: number
}

/**
 * Reads `page` and `limit` leniently, as Gitea does: junk or ≤0 falls back to the defaults. The
 * caller's saved page size (the Pagination setting; 0 = none) replaces the default limit.
 */
export function pageOf(query: { page?: string; limit?: string }, savedPageSize = 0): Page {
  const page = Math.max(1, Math.trunc(Number(query.page)) || 1)
  const asked = Math.trunc(Number(query.limit)) || 0
  const limit = Math.min(MAX_PAGE_SIZE, asked > 0 ? asked : savedPageSize > 0 ? savedPageSize : DEFAULT_PAGE_SIZE)
  return { page, limit, offset: (page - 1) * limit }
}

/**
 * The headers of a paginated list: `X-Total-Count`, and with `link` Gitea's `Link` header
 * (`next`, `last`, `first`, `prev`, each only when meaningful; query keys sorted; absolute URLs
 * from `publicUrl`).
 */
export function pageHeaders(request: Request, publicUrl: string, page: Page, total: number, link: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'x-total-count': String(total) }
  if (!link) return headers
  const url = new URL(request.url)
  const pages = Math.max(1, Math.ceil(total / page.limit))
  const at = (n: number) => {
    const params = new URLSearchParams(url.searchParams)
    params.set('page', String(n))
    params.sort()
    return `<${publicUrl}${url.pathname}?${params.toString()}>`
  }
  const links: string[] = []
  if (total > page.page * page.limit) links.push(`${at(page.page + 1)}; rel="next"`)
  if (page.page < pages) links.push(`${at(pages)}; rel="last"`)
  if (page.page > 1) links.push(`${at(1)}; rel="first"`, `${at(page.page - 1)}; rel="prev"`)
  if (links.length > 0) headers.link = links.join(',')
  return headers
}
