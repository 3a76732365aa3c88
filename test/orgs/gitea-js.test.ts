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

describe('gitea-js 1.23.0 against the server, unchanged', () => {
  test('org create, get, edit, members, public members, member removal and delete', async () => {
    const t = await makeTestApp()
    const base = await t.listen()
    const [alice, bob] = await t.users('alice', 'bob')
    const asAlice = giteaApi(base, { token: alice.token })
    const asBob = giteaApi(base, { token: bob.token })
    const anonymous = giteaApi(base)

    const created = await asAlice.orgs.orgCreate({ username: 'gitorg', full_name: 'Git Org', visibility: 'public', description: 'hi' })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ name: 'gitorg', username: 'gitorg', full_name: 'Git Org', visibility: 'public' })

    expect((await anonymous.orgs.orgGet('gitorg')).data).toMatchObject({ name: 'gitorg', description: 'hi' })
    expect((await asAlice.orgs.orgEdit('gitorg', { description: 'edited', location: 'Lisbon' })).data).toMatchObject({ description: 'edited', location: 'Lisbon', full_name: 'Git Org' })
    expect(await statusOf(asBob.orgs.orgEdit('gitorg', { description: 'nope' }))).toBe(403)

    const ownersTeam = (await asAlice.user.userListTeams()).data[0]
    expect(ownersTeam).toMatchObject({ name: 'Owners', permission: 'owner', organization: { name: 'gitorg' } })
    await t.as(alice).send('PUT', `/api/v1/teams/${ownersTeam.id}/members/bob`)

    expect((await asAlice.orgs.orgListMembers('gitorg')).data.map((u) => u.login)).toEqual(['alice', 'bob'])
    expect((await asAlice.orgs.orgIsMember('gitorg', 'bob')).status).toBe(204)
    // The anonymous check is redirected (302) to the public check, which fetch follows: bob is private → 404.
    expect(await statusOf(anonymous.orgs.orgIsMember('gitorg', 'bob'))).toBe(404)

    expect((await asBob.orgs.orgPublicizeMember('gitorg', 'bob')).status).toBe(204)
    expect((await anonymous.orgs.orgListPublicMembers('gitorg')).data.map((u) => u.login)).toEqual(['bob'])
    expect((await anonymous.orgs.orgIsPublicMember('gitorg', 'bob')).status).toBe(204)
    expect((await anonymous.orgs.orgIsMember('gitorg', 'bob')).status).toBe(204)
    expect(await statusOf(asAlice.orgs.orgPublicizeMember('gitorg', 'bob'))).toBe(403)
    expect((await asBob.orgs.orgConcealMember('gitorg', 'bob')).status).toBe(204)
    expect(await statusOf(anonymous.orgs.orgIsPublicMember('gitorg', 'bob'))).toBe(404)

    expect((await asAlice.user.orgListCurrentUserOrgs()).data.map((o) => o.name)).toEqual(['gitorg'])
    expect((await asAlice.orgs.orgDeleteMember('gitorg', 'bob')).status).toBe(204)
    expect(await statusOf(asAlice.orgs.orgIsMember('gitorg', 'bob'))).toBe(404)

    expect((await asAlice.orgs.orgDelete('gitorg')).status).toBe(204)
    expect(await statusOf(anonymous.orgs.orgGet('gitorg'))).toBe(404)
  })
})
