import { describe, expect, test } from 'bun:test'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/** Writes racing a delete of what they write into: 404, never a 500 from a dangling foreign key. */

const API = '/api/v1'

describe("team membership racing the team's deletion", () => {
  test('an owner adds five users while another owner deletes the team → every answer 204 or 404, none 500', async () => {
    const t = await makeTestApp()
    const [olga, otto] = await t.users('olga', 'otto')
    const names = ['u1', 'u2', 'u3', 'u4', 'u5']
    await t.users(...names)
    await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
    const team = await (await t.as(olga).send('POST', `${API}/orgs/acme/teams`, { name: 'devs' })).json()
    const responses = await Promise.all([
      t.as(otto).delete(`${API}/teams/${team.id}`),
      ...names.map((n) => t.as(olga).send('PUT', `${API}/teams/${team.id}/members/${n}`)),
    ])
    expect(responses[0].status).toBe(204)
    for (const r of responses.slice(1)) expect([204, 404]).toContain(r.status)
    const members = await (await t.as(olga).get(`${API}/orgs/acme/members`)).json()
    expect(members.map((m: { login: string }) => m.login).sort()).toEqual(['olga', 'otto'])
  })

  test('an owner renames a team while another owner deletes it → 200 or 404, none 500', async () => {
    const t = await makeTestApp()
    const [olga, otto] = await t.users('olga', 'otto')
    await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
    const team = await (await t.as(olga).send('POST', `${API}/orgs/acme/teams`, { name: 'devs' })).json()
    const responses = await Promise.all([
      t.as(otto).delete(`${API}/teams/${team.id}`),
      ...[1, 2, 3, 4].map((i) => t.as(olga).send('PATCH', `${API}/teams/${team.id}`, { description: `d${i}` })),
    ])
    expect(responses[0].status).toBe(204)
    for (const r of responses.slice(1)) expect([200, 404]).toContain(r.status)
  })
})

describe("org writes racing the org's deletion", () => {
  for (const [what, method, path, body, ok] of [
    ['edits the org', 'PATCH', '/orgs/acme', { description: 'd' }, 200],
    ['creates a team', 'POST', '/orgs/acme/teams', { name: 'devs' }, 201],
    ['defines a custom role', 'POST', '/orgs/acme/roles', { name: 'r', permissions: ['view:avatar'] }, 201],
    ['subscribes to the org', 'POST', '/orgs/acme/subscription', undefined, 200],
  ] as const)
    test(`a member ${what} while the last owner deletes the org → ${ok} or 404, none 500, nothing left behind`, async () => {
      const t = await makeTestApp()
      const [olga] = await t.users('olga')
      const { org } = await makeOrg(t, 'acme', { owner: olga })
      const responses = await Promise.all([
        t.as(olga).delete(`${API}/orgs/acme`),
        ...[1, 2, 3, 4].map((i) =>
          t.as(olga).send(method, `${API}${path}`, body && 'name' in body ? { ...body, name: `${body.name}${i}` } : body),
        ),
      ])
      expect(responses[0].status).toBe(204)
      for (const r of responses.slice(1)) expect([ok, 404]).toContain(r.status)
      expect(
        await t
          .as(olga)
          .get(`${API}/user/inbox/subscriptions?orgID=${org.id}`)
          .then((r) => r.json()),
      ).toEqual([])
    })
})
