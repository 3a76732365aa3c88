import { describe, expect, test } from 'bun:test'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/** Decisions §1: org lists send X-Total-Count and Gitea's Link header; junk page → 1; limit clamped to 50. */

const API = '/api/v1'

describe('pagination headers on the org lists', () => {
  for (const path of ['/user/orgs', '/user/settings/organizations', '/users/olga/orgs', '/orgs/o1/members', '/orgs/o1/public_members'])
    test(`olga pages ${path} with limit=1 → one item, X-Total-Count 3, Link next/last; page=junk → page 1`, async () => {
      const t = await makeTestApp()
      const [olga, u2, u3] = await t.users('olga', 'u2', 'u3')
      for (const name of ['o1', 'o2', 'o3'])
        await makeOrg(t, name, {
          owner: olga,
          members: name === 'o1' ? [u2, u3] : [],
          publicMembers: name === 'o1' ? [olga, u2, u3] : [olga],
        })
      const res = await t.as(olga).get(`${API}${path}?limit=1&page=junk`)
      expect(res.status).toBe(200)
      expect((await res.json()).length).toBe(1)
      expect(res.headers.get('x-total-count')).toBe('3')
      const link = res.headers.get('link') ?? ''
      expect(link).toContain('rel="next"')
      expect(link).toContain('rel="last"')
      expect(link).toContain('page=2')
      const big = await t.as(olga).get(`${API}${path}?limit=100000`)
      expect((await big.json()).length).toBe(3)
    })
})
