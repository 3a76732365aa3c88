import { describe, expect, test } from 'bun:test'
import { pageOf, setPaginationHeaders } from '../../src/http/pagination'

describe('pageOf', () => {
  test.each([
    [{}, 1, 30], [{ page: '0' }, 1, 30], [{ page: '-3' }, 1, 30], [{ page: 'junk', limit: 'junk' }, 1, 30],
    [{ page: '2', limit: '10' }, 2, 10], [{ limit: '1000' }, 1, 50], [{ limit: '0' }, 1, 30],
  ])('%p → page %p, limit %p', (query, page, limit) => {
    expect(pageOf(query)).toMatchObject({ page, limit, offset: (page - 1) * limit })
  })

  test("a user's saved page size replaces the default, and is clamped to 50", () => {
    expect(pageOf({}, { pageSize: 10 }).limit).toBe(10)
    expect(pageOf({}, { pageSize: 80 }).limit).toBe(50)
    expect(pageOf({ limit: '5' }, { pageSize: 10 }).limit).toBe(5)
  })
})

describe('setPaginationHeaders', () => {
  const url = (query: string) => new URL(`http://localhost/api/v1/user/orgs${query}`)
  const headersOf = (total: number, query: Record<string, string>, link?: { url: URL; publicUrl: string }) => {
    const set = { headers: {} as Record<string, string | number> }
    setPaginationHeaders(set, total, pageOf(query), link)
    return set.headers
  }

  test("middle page: next, last, first, prev in Gitea's order, keys sorted, public URL", () => {
    const headers = headersOf(3, { page: '2', limit: '1' }, { url: url('?page=2&limit=1&z=1'), publicUrl: 'https://pf.example' })
    expect(headers['x-total-count']).toBe('3')
    expect(headers.link).toBe([
      '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="next"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="last"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="first"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="prev"',
    ].join(','))
  })

  test('a single page, or no link asked: only the count', () => {
    expect(headersOf(0, {}, { url: url(''), publicUrl: 'https://pf.example' }).link).toBeUndefined()
    const plain = headersOf(5, { limit: '1' })
    expect(plain['x-total-count']).toBe('5')
    expect(plain.link).toBeUndefined()
  })
})
