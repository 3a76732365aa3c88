import { describe, expect, test } from 'bun:test'
import { pageHeaders, pageOf } from '../../src/http/pagination'

describe('pageOf', () => {
  test.each([
    [{}, 1, 30], [{ page: '0' }, 1, 30], [{ page: '-3' }, 1, 30], [{ page: 'junk', limit: 'junk' }, 1, 30],
    [{ page: '2', limit: '10' }, 2, 10], [{ limit: '1000' }, 1, 50], [{ limit: '0' }, 1, 30],
  ])('%p → page %p, limit %p', (query, page, limit) => {
    expect(pageOf(query)).toMatchObject({ page, limit, offset: (page - 1) * limit })
  })
})

describe('pageHeaders', () => {
  const request = (query: string) => new Request(`http://localhost/api/v1/user/orgs${query}`)

  test('middle page: next, last, first, prev in Gitea\'s order, keys sorted, public URL', () => {
    const headers = pageHeaders(request('?page=2&limit=1&z=1'), 'https://pf.example', pageOf({ page: '2', limit: '1' }), 3, true)
    expect(headers['x-total-count']).toBe('3')
    expect(headers.link).toBe([
      '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="next"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="last"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="first"',
      '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="prev"',
    ].join(','))
  })

  test('a single page, or an empty list: no Link; without link: only the count', () => {
    expect(pageHeaders(request(''), 'https://pf.example', pageOf({}), 0, true)).toEqual({ 'x-total-count': '0' })
    expect(pageHeaders(request(''), 'https://pf.example', pageOf({ limit: '1' }), 5, false)).toEqual({ 'x-total-count': '5' })
  })
})
