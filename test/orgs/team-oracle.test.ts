import { expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'
import { makeOrg } from './support'

test("an outsider probing a public org's team ids gets the same 404 for a real team as for a missing one, on every team route", async () => {
  const t = await makeTestApp()
  const [olga, eve, mia] = await t.users('olga', 'eve', 'mia')
  const { membersTeam } = await makeOrg(t, 'acme', { owner: olga!, members: [mia!], visibility: 'public' })
  const real = membersTeam!.id
  const missing = 999_999
  // Every route naming a team, as the app has them: a team route added later is probed too.
  const routes = t.app.routes.filter((r) => r.path.includes(':teamId'))
  expect(routes.length).toBeGreaterThanOrEqual(9)
  for (const { method, path } of routes) {
    const at = (id: number) => path.replace(':teamId', String(id)).replace(':username', 'mia').replace(':cluster', 'c1')
    const body = method === 'PATCH' ? { name: 'x' } : undefined
    const [a, b] = [await t.as(eve!).send(method, at(real), body), await t.as(eve!).send(method, at(missing), body)]
    expect(`${method} ${at(0)} → ${a.status} ${await a.text()}`.replace(String(real), 'ID')).toBe(
      `${method} ${at(0)} → ${b.status} ${await b.text()}`.replace(String(missing), 'ID'),
    )
    expect(a.status).toBe(404)
  }
  // nothing changed
  const team = await (await t.as(olga!).get(`/api/v1/teams/${real}`)).json()
  expect(team.name).toBe('Members')
  expect((await (await t.as(olga!).get(`/api/v1/teams/${real}/members`)).json()).map((u: { login: string }) => u.login)).toEqual(['mia'])
})
