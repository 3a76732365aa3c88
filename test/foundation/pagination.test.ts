import { describe, expect, test } from 'bun:test'
import { answerPage, pageOf } from '../../src/http/pagination'
import { mintToken } from '../../src/identity/tokens/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

describe('pageOf', () => {
  test.each([
    [{}, 1, 30],
    [{ page: '0' }, 1, 30],
    [{ page: '-3' }, 1, 30],
    [{ page: 'junk', limit: 'junk' }, 1, 30],
    [{ page: '2', limit: '10' }, 2, 10],
    [{ limit: '1000' }, 1, 50],
    [{ limit: '0' }, 1, 30],
  ])('%p → page %p, limit %p', (query, page, limit) => {
    expect(pageOf(query)).toMatchObject({ page, limit, offset: (page - 1) * limit })
  })

  test("a user's saved page size replaces the default, and is clamped to 50", () => {
    expect(pageOf({}, { pageSize: 10 }).limit).toBe(10)
    expect(pageOf({}, { pageSize: 80 }).limit).toBe(50)
    expect(pageOf({ limit: '5' }, { pageSize: 10 }).limit).toBe(5)
  })
})

describe('answerPage', () => {
  /** Runs answerPage for a list of `total` numbers at `query`; returns the items and the headers set. */
  const answer = async (total: number, query: string, publicUrl = 'https://pf.example') => {
    const set = { headers: {} as Record<string, string | number> }
    const all = Array.from({ length: total }, (_, i) => i)
    const request = new Request(`http://localhost/api/v1/user/orgs${query}`)
    const items = await answerPage(
      publicUrl,
      { query: Object.fromEntries(new URL(request.url).searchParams), request, set },
      undefined,
      async (page) => ({ items: all.slice(page.offset, page.offset + page.limit), total }),
    )
    return { items, headers: set.headers }
  }

  test("middle page: the page's items; next, last, first, prev in Gitea's order, keys sorted, public URL", async () => {
    const { items, headers } = await answer(3, '?page=2&limit=1&z=1')
    expect(items).toEqual([1])
    expect(headers['x-total-count']).toBe('3')
    expect(headers.link).toBe(
      [
        '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="next"',
        '<https://pf.example/api/v1/user/orgs?limit=1&page=3&z=1>; rel="last"',
        '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="first"',
        '<https://pf.example/api/v1/user/orgs?limit=1&page=1&z=1>; rel="prev"',
      ].join(','),
    )
    expect(headers['access-control-expose-headers']).toBe('X-Total-Count, Link')
  })

  test('a single page: the count and no Link', async () => {
    const { items, headers } = await answer(2, '')
    expect(items).toEqual([0, 1])
    expect(headers['x-total-count']).toBe('2')
    expect(headers.link).toBeUndefined()
  })
})

describe('every paginated list', () => {
  test.each([
    '/api/v1/user/orgs',
    '/api/v1/users/alice/orgs',
    '/api/v1/orgs/acme/members',
    '/api/v1/orgs/acme/public_members',
    '/api/v1/orgs/acme/teams',
    '/api/v1/user/teams',
    '/api/v1/users/search',
    '/api/v1/user/followers',
    '/api/v1/user/following',
    '/api/v1/users/alice/followers',
    '/api/v1/users/alice/following',
    '/api/v1/user/settings/tokens/access-tokens/',
    '/api/v1/user/deploy/orders',
  ])('GET %s?limit=1 sends X-Total-Count and, with more than one page, Link', async (path) => {
    const t = await makeTestApp()
    const [alice, bob, carol] = await t.users('alice', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: alice, members: [bob, carol], publicMembers: [bob, carol] })
    for (const who of [bob, carol]) await t.as(who).send('PUT', '/api/v1/user/following/alice')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/carol')
    await t.as(alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'devs', permission: 'read', units: ['repo.code'] })
    await t.as(alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'ops', permission: 'read', units: ['repo.code'] })
    await makeOrg(t, 'beta', { owner: alice })
    await mintToken(t.deps.db, alice.user.id, { name: 'second', scopes: ['all'] })
    const res = await t.as(alice).get(`${path}?limit=1`)
    expect(res.status).toBe(200)
    const total = Number(res.headers.get('x-total-count'))
    // Orders need a chart source; their list is empty here and still counted.
    expect(total).toBeGreaterThanOrEqual(path.endsWith('/orders') ? 0 : 2)
    if (total > 1) expect(res.headers.get('link')).toContain('rel="next"')
    expect(res.headers.get('access-control-expose-headers')).toBe('X-Total-Count, Link')
  })
})
