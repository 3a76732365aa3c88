import { describe, expect, test } from 'bun:test'
import { mintToken } from '../../src/identity/tokens/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'
import { deadRegistrationFixture } from './support'

/**
 * Org acme (owner alice, admin adam, rita on team Members/read, nora on team viewers/read, which is not granted),
 * its cluster prod granted to Members and to a write team "deployers"; alice's own cluster personal.
 */
async function grantsLab() {
  const t = await makeTestApp()
  const [alice, adam, rita, nora, bob] = await t.users('alice', 'adam', 'rita', 'nora', 'bob')
  const { org, membersTeam } = await makeOrg(t, 'acme', { owner: alice!, admins: [adam!], members: [rita!] })
  const viewers = await (await t.as(alice!).send('POST', '/api/v1/orgs/acme/teams', { name: 'viewers', permission: 'read' })).json()
  expect((await t.as(alice!).send('PUT', `/api/v1/teams/${viewers.id}/members/nora`)).status).toBe(204)
  const deployers = await (await t.as(alice!).send('POST', '/api/v1/orgs/acme/teams', { name: 'deployers', permission: 'write' })).json()
  await deadRegistrationFixture(t, org, 'prod')
  await deadRegistrationFixture(t, alice!.user, 'personal')
  for (const team of [membersTeam!.id, deployers.id])
    expect((await t.as(alice!).send('PUT', `/api/v1/teams/${team}/clusters/prod`)).status).toBe(204)
  return { t, alice: alice!, adam: adam!, rita: rita!, nora: nora!, bob: bob!, members: membersTeam!.id, deployers: deployers.id as number }
}

const PATH = '/api/v1/clustersv2/acme/prod/teams'

describe('GET /clustersv2/{owner}/{cluster}/teams', () => {
  test('the org owner → the teams granted the cluster, by name, with their ids and permissions', async () => {
    const l = await grantsLab()
    const res = await l.t.as(l.alice).get(PATH)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([
      { id: l.deployers, name: 'deployers', permission: 'write' },
      { id: l.members, name: 'Members', permission: 'read' },
    ])
  })

  test('an org admin and a member of a granted team see the same list', async () => {
    const l = await grantsLab()
    const expected = await (await l.t.as(l.alice).get(PATH)).json()
    for (const who of [l.adam, l.rita]) expect(await (await l.t.as(who).get(PATH)).json()).toEqual(expected)
  })

  test('a revoked grant leaves the list', async () => {
    const l = await grantsLab()
    expect((await l.t.as(l.alice).delete(`/api/v1/teams/${l.deployers}/clusters/prod`)).status).toBe(204)
    expect(((await (await l.t.as(l.alice).get(PATH)).json()) as { name: string }[]).map((team) => team.name)).toEqual(['Members'])
  })

  test('an org member on no granted team, and an outsider → 404, as on every route naming the cluster', async () => {
    const l = await grantsLab()
    for (const who of [l.nora, l.bob]) expect((await l.t.as(who).get(PATH)).status).toBe(404)
  })

  test("a user's own cluster has no teams → []", async () => {
    const l = await grantsLab()
    const res = await l.t.as(l.alice).get('/api/v1/clustersv2/alice/personal/teams')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([])
  })

  test('anonymous → 401; a token without the cluster scope → 403; a read:cluster token → 200', async () => {
    const l = await grantsLab()
    expect((await l.t.request('GET', PATH)).status).toBe(401)
    const token = async (scopes: string[]) => (await mintToken(l.t.deps.db, l.alice.user.id, { name: scopes.join(), scopes })).plaintext
    expect((await l.t.request('GET', PATH, { token: await token(['read:organization']) })).status).toBe(403)
    expect((await l.t.request('GET', PATH, { token: await token(['read:cluster']) })).status).toBe(200)
  })
})
