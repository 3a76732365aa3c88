import { describe, expect, test } from 'bun:test'
import { Messages as ConditionMessages } from '../../src/orgs/rules'
import { ownerIds } from '../../src/orgs/store'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

/**
 * T33: the last-owner rule holds under concurrency. Two owners who leave (or remove each other)
 * at the same moment: one succeeds, the other gets 409, and the org keeps an owner.
 */

const API = '/api/v1'

async function twoOwners(): Promise<{ t: TestApp; olga: TestUser; otto: TestUser; orgId: number; ownersTeamId: number }> {
  const t = await makeTestApp()
  const [olga, otto] = await t.users('olga', 'otto')
  const { org, ownersTeam } = await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
  return { t, olga, otto, orgId: org.id, ownersTeamId: ownersTeam.id }
}

async function expectOneWins(t: TestApp, orgId: number, responses: Response[], success: 200 | 204): Promise<void> {
  expect(responses.map((r) => r.status).sort()).toEqual([success, 409])
  const refused = responses.find((r) => r.status === 409)!
  expect(await refused.json()).toMatchObject({ message: ConditionMessages.lastOwner })
  expect((await ownerIds(t.deps.db.read, orgId)).length).toBe(1)
}

describe('T33: two owners at once', () => {
  for (let round = 0; round < 3; round++)
    test(`both owners leave at once (members/action/leave) → one 200, one 409, an owner remains (round ${round + 1})`, async () => {
      const { t, olga, otto, orgId } = await twoOwners()
      const responses = await Promise.all([olga, otto].map((who) => t.as(who).send('POST', `${API}/orgs/acme/members/action/leave`)))
      await expectOneWins(t, orgId, responses, 200)
    })

  test('each owner removes the other at once (DELETE member) → one 204, one 409, an owner remains', async () => {
    const { t, olga, otto, orgId } = await twoOwners()
    const responses = await Promise.all([
      t.as(olga).delete(`${API}/orgs/acme/members/otto`),
      t.as(otto).delete(`${API}/orgs/acme/members/olga`),
    ])
    await expectOneWins(t, orgId, responses, 204)
  })

  test('each owner takes the other out of Owners at once (team member delete) → one 204, one 409, an owner remains', async () => {
    const { t, olga, otto, orgId, ownersTeamId } = await twoOwners()
    const responses = await Promise.all([
      t.as(olga).delete(`${API}/teams/${ownersTeamId}/members/otto`),
      t.as(otto).delete(`${API}/teams/${ownersTeamId}/members/olga`),
    ])
    await expectOneWins(t, orgId, responses, 204)
  })

  test('one owner leaves while the other removes her (remove action) → one succeeds, one 409, an owner remains', async () => {
    const { t, olga, otto, orgId } = await twoOwners()
    const responses = await Promise.all([
      t.as(olga).send('POST', `${API}/orgs/acme/members/action/leave`),
      t.as(otto).delete(`${API}/orgs/acme/members/otto`),
    ])
    expect(responses.filter((r) => r.status === 409).length).toBe(1)
    expect((await ownerIds(t.deps.db.read, orgId)).length).toBe(1)
  })
})
