import { describe, expect, test } from 'bun:test'
import { giteaApi } from 'gitea-js'
import { makeTestApp } from '../support/app'

/** gitea-js throws the Response (with `.status`) on non-2xx; this returns the status either way. */
async function statusOf(call: Promise<{ status: number }>): Promise<number> {
  try {
    return (await call).status
  } catch (e) {
    return (e as Response).status
  }
}

/** An app on a real port with alice, owner of the public org `gitorg`, bob (not a member) and gitea-js clients. */
async function gitOrg() {
  const t = await makeTestApp()
  const base = await t.listen()
  const [alice, bob] = await t.users('alice', 'bob')
  const asAlice = giteaApi(base, { token: alice.token })
  const asBob = giteaApi(base, { token: bob.token })
  const anonymous = giteaApi(base)
  const created = await asAlice.orgs.orgCreate({ username: 'gitorg', full_name: 'Git Org', visibility: 'public', description: 'hi' })
  /** Makes bob a (private) member through the Owners team. */
  const addBob = async () => {
    const ownersTeam = (await asAlice.user.userListTeams()).data[0]!
    await t.as(alice).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/bob`)
  }
  return { t, asAlice, asBob, anonymous, created, addBob }
}

describe('gitea-js 1.23.0 against the server, unchanged', () => {
  test('orgCreate → 201 with the new org', async () => {
    const { created } = await gitOrg()
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ name: 'gitorg', username: 'gitorg', full_name: 'Git Org', visibility: 'public' })
  })

  test('orgGet, anonymous → the org', async () => {
    const { anonymous } = await gitOrg()
    expect((await anonymous.orgs.orgGet('gitorg')).data).toMatchObject({ name: 'gitorg', description: 'hi' })
  })

  test('orgEdit by the owner → the changes, other fields kept; by a non-member → 403', async () => {
    const { asAlice, asBob } = await gitOrg()
    expect((await asAlice.orgs.orgEdit('gitorg', { description: 'edited', location: 'Lisbon' })).data).toMatchObject({
      description: 'edited',
      location: 'Lisbon',
      full_name: 'Git Org',
    })
    expect(await statusOf(asBob.orgs.orgEdit('gitorg', { description: 'nope' }))).toBe(403)
  })

  test('userListTeams → the Owners team of the new org', async () => {
    const { asAlice } = await gitOrg()
    expect((await asAlice.user.userListTeams()).data[0]).toMatchObject({
      name: 'Owners',
      permission: 'owner',
      organization: { name: 'gitorg' },
    })
  })

  test('a member added to a team: orgListMembers and orgIsMember show them; anonymous orgIsMember of a private member → 404', async () => {
    const { asAlice, anonymous, addBob } = await gitOrg()
    await addBob()
    expect((await asAlice.orgs.orgListMembers('gitorg')).data.map((u) => u.login)).toEqual(['alice', 'bob'])
    expect((await asAlice.orgs.orgIsMember('gitorg', 'bob')).status).toBe(204)
    // The anonymous check is redirected (302) to the public check, which fetch follows: bob is private → 404.
    expect(await statusOf(anonymous.orgs.orgIsMember('gitorg', 'bob'))).toBe(404)
  })

  test('orgPublicizeMember by the member → the public list and checks show them', async () => {
    const { asBob, anonymous, addBob } = await gitOrg()
    await addBob()
    expect((await asBob.orgs.orgPublicizeMember('gitorg', 'bob')).status).toBe(204)
    expect((await anonymous.orgs.orgListPublicMembers('gitorg')).data.map((u) => u.login)).toEqual(['bob'])
    expect((await anonymous.orgs.orgIsPublicMember('gitorg', 'bob')).status).toBe(204)
    expect((await anonymous.orgs.orgIsMember('gitorg', 'bob')).status).toBe(204)
  })

  test('orgPublicizeMember of someone else → 403', async () => {
    const { asAlice, addBob } = await gitOrg()
    await addBob()
    expect(await statusOf(asAlice.orgs.orgPublicizeMember('gitorg', 'bob'))).toBe(403)
  })

  test('orgConcealMember → the public check answers 404 again', async () => {
    const { asBob, anonymous, addBob } = await gitOrg()
    await addBob()
    expect((await asBob.orgs.orgPublicizeMember('gitorg', 'bob')).status).toBe(204)
    expect((await asBob.orgs.orgConcealMember('gitorg', 'bob')).status).toBe(204)
    expect(await statusOf(anonymous.orgs.orgIsPublicMember('gitorg', 'bob'))).toBe(404)
  })

  test('orgListCurrentUserOrgs → the org', async () => {
    const { asAlice } = await gitOrg()
    expect((await asAlice.user.orgListCurrentUserOrgs()).data.map((o) => o.name)).toEqual(['gitorg'])
  })

  test('orgDeleteMember → 204, and they are no longer a member', async () => {
    const { asAlice, addBob } = await gitOrg()
    await addBob()
    expect((await asAlice.orgs.orgDeleteMember('gitorg', 'bob')).status).toBe(204)
    expect(await statusOf(asAlice.orgs.orgIsMember('gitorg', 'bob'))).toBe(404)
  })

  test('orgDelete → 204, then orgGet → 404', async () => {
    const { asAlice, anonymous } = await gitOrg()
    expect((await asAlice.orgs.orgDelete('gitorg')).status).toBe(204)
    expect(await statusOf(anonymous.orgs.orgGet('gitorg'))).toBe(404)
  })
})
