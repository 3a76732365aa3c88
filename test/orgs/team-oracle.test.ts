import { expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'
import { makeOrg } from './support'

test("an outsider probing a public org's team ids gets the same 404 for a real team as for a missing one, on every team route", async () => {
  const t = await makeTestApp()
  const [olga, eve, mia] = await t.users('olga', 'eve', 'mia')
  const { membersTeam } = await makeOrg(t, 'acme', { owner: olga!, members: [mia!], visibility: 'public' })
  const real = membersTeam!.id
  const missing = 999_999
  const probes: [string, (id: number) => string, unknown?][] = [
    ['GET', (id) => `/api/v1/teams/${id}`],
    ['PATCH', (id) => `/api/v1/teams/${id}`, { name: 'x' }],
    ['DELETE', (id) => `/api/v1/teams/${id}`],
    ['GET', (id) => `/api/v1/teams/${id}/members`],
    ['PUT', (id) => `/api/v1/teams/${id}/members/eve`],
    ['DELETE', (id) => `/api/v1/teams/${id}/members/mia`],
  ]
  for (const [method, path, body] of probes) {
    const [a, b] = [await t.as(eve!).send(method, path(real), body), await t.as(eve!).send(method, path(missing), body)]
    expect(`${method} ${path(0)} → ${a.status} ${await a.text()}`.replace(String(real), 'ID')).toBe(
      `${method} ${path(0)} → ${b.status} ${await b.text()}`.replace(String(missing), 'ID'),
    )
    expect(a.status).toBe(404)
  }
  // nothing changed
  const team = await (await t.as(olga!).get(`/api/v1/teams/${real}`)).json()
  expect(team.name).toBe('Members')
  expect((await (await t.as(olga!).get(`/api/v1/teams/${real}/members`)).json()).map((u: { login: string }) => u.login)).toEqual(['mia'])
})
