import { describe, expect, test } from 'bun:test'
import { Messages as AuthzMessages } from '../../src/authz/authorize'
import { Messages as IdentityMessages } from '../../src/identity/service'
import { updateUser } from '../../src/identity/store'
import { mintToken } from '../../src/identity/tokens/service'
import { Messages as ConditionMessages } from '../../src/orgs/rules'
import { Messages } from '../../src/orgs/service'
import { makeTestApp } from '../support/app'
import { makeOrg, PNG } from './support'

const API = '/api/v1'

describe('POST /orgs', () => {
  test('alice creates a limited org → 201, she is its only member, privately, in the Owners team', async () => {
    const t = await makeTestApp()
    const [alice, carol] = await t.users('alice', 'carol')
    const res = await t
      .as(alice)
      .send('POST', `${API}/orgs`, { username: 'neworg', visibility: 'limited', full_name: 'New Org', website: 'https://new.example' })
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({
      username: 'neworg',
      name: 'neworg',
      visibility: 'limited',
      orgType: 1,
      full_name: 'New Org',
      website: 'https://new.example',
    })
    expect((await (await t.as(alice).get(`${API}/orgs/neworg/members`)).json()).map((u: { login: string }) => u.login)).toEqual(['alice'])
    expect(await (await t.as(carol).get(`${API}/orgs/neworg/members`)).json()).toEqual([])
    const teams = await (await t.as(alice).get(`${API}/orgs/neworg/teams`)).json()
    expect(teams).toMatchObject([{ name: 'Owners', permission: 'owner', organization: null }])
  })

  test('orgType alone sets the visibility; visibility wins when both are sent', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect(await (await t.as(alice).send('POST', `${API}/orgs`, { username: 'o1', orgType: 'private' })).json()).toMatchObject({
      visibility: 'private',
      orgType: 2,
    })
    expect(
      await (await t.as(alice).send('POST', `${API}/orgs`, { username: 'o2', orgType: 'private', visibility: 'limited' })).json(),
    ).toMatchObject({ orgType: 1 })
    expect(await (await t.as(alice).send('POST', `${API}/orgs`, { username: 'o3', visibility: '' })).json()).toMatchObject({
      visibility: 'public',
      orgType: 0,
    })
  })

  test('a name taken by a user or an org, in any case → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice', 'bob')
    expect((await t.as(alice).send('POST', `${API}/orgs`, { username: 'acme' })).status).toBe(201)
    expect((await t.as(alice).send('POST', `${API}/orgs`, { username: 'ACME' })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/orgs`, { username: 'Bob' })).status).toBe(422)
  })

  test.each([
    ['api', IdentityMessages.nameReserved],
    ['x.keys', IdentityMessages.nameNotAllowed],
    ['-bad', IdentityMessages.nameInvalid],
    ['a'.repeat(41), IdentityMessages.nameInvalid],
  ])('name %p → 422 with the reason', async (username, message) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', `${API}/orgs`, { username })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(message)
  })

  test('a bad visibility, a missing username or a website that is not a URL → 422, nothing created', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', `${API}/orgs`, { username: 'o2', visibility: 'bogus' })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/orgs`, { full_name: 'x' })).status).toBe(422)
    const res = await t.as(alice).send('POST', `${API}/orgs`, { username: 'o2', website: 'not a url' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.websiteInvalid)
    expect((await t.as(alice).get(`${API}/orgs/o2`)).status).toBe(404)
  })

  test('anonymous → 401', async () => {
    const t = await makeTestApp()
    expect((await t.request('POST', `${API}/orgs`, { body: { username: 'x' } })).status).toBe(401)
  })

  test('a user whose allow_create_organization flag is off → 403, even with a bad body', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { allowCreateOrganization: false }))
    const res = await t.as(alice).send('POST', `${API}/orgs`, { username: 'acme' })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.createOrgNotAllowed)
    expect((await t.as(alice).send('POST', `${API}/orgs`, {})).status).toBe(403)
  })

  test('regular org creation turned off: a regular user → 403, a site admin → 201', async () => {
    const t = await makeTestApp({ PLATFORM_DISABLE_REGULAR_ORG_CREATION: 'true' })
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', `${API}/orgs`, { username: 'acme' })).status).toBe(403)
    expect((await t.as(await t.admin()).send('POST', `${API}/orgs`, { username: 'acme' })).status).toBe(201)
  })
})

describe('GET /orgs/{org}', () => {
  const cases: [visibility: 'public' | 'limited' | 'private', who: 'anonymous' | 'outsider' | 'member' | 'site-admin', status: number][] = [
    ['public', 'anonymous', 200],
    ['public', 'outsider', 200],
    ['public', 'member', 200],
    ['public', 'site-admin', 200],
    ['limited', 'anonymous', 404],
    ['limited', 'outsider', 200],
    ['limited', 'member', 200],
    ['limited', 'site-admin', 200],
    ['private', 'anonymous', 404],
    ['private', 'outsider', 404],
    ['private', 'member', 200],
    ['private', 'site-admin', 200],
  ]
  for (const [visibility, who, status] of cases)
    test(`a ${visibility} org seen by ${who} → ${status}`, async () => {
      const t = await makeTestApp()
      const [olga, mia, carol] = await t.users('olga', 'mia', 'carol')
      await makeOrg(t, 'acme', { owner: olga, members: [mia], visibility })
      const caller = { outsider: carol, member: mia, 'site-admin': await t.admin() }
      const res = who === 'anonymous' ? await t.request('GET', `${API}/orgs/acme`) : await t.as(caller[who]).get(`${API}/orgs/acme`)
      expect(res.status).toBe(status)
      if (status === 200)
        expect(await res.json()).toMatchObject({ username: 'acme', visibility, avatar_url: `${t.config.publicUrl}/avatars/acme` })
    })

  test("an unknown org, or a user's name → 404", async () => {
    const t = await makeTestApp()
    await t.users('alice')
    expect((await t.request('GET', `${API}/orgs/nope`)).status).toBe(404)
    expect((await t.request('GET', `${API}/orgs/alice`)).status).toBe(404)
  })
})

describe('PATCH /orgs/{org}', () => {
  test('the owner edits the description → 200; absent fields stay', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    await t.as(olga).send('PATCH', `${API}/orgs/acme`, { full_name: 'Acme Inc', location: 'Berlin' })
    const res = await t.as(olga).send('PATCH', `${API}/orgs/acme`, {
      description: 'd',
      visibility: 'private',
      fleetmgrManagementClusterEndPoint: 'https://mgmt.example',
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      description: 'd',
      full_name: 'Acme Inc',
      location: 'Berlin',
      visibility: 'private',
      orgType: 2,
      fleetmgrManagementClusterEndPoint: 'https://mgmt.example',
    })
  })

  test('an org admin may edit → 200', async () => {
    const t = await makeTestApp()
    const [olga, ada] = await t.users('olga', 'ada')
    await makeOrg(t, 'acme', { owner: olga, admins: [ada] })
    expect((await t.as(ada).send('PATCH', `${API}/orgs/acme`, { description: 'by ada' })).status).toBe(200)
  })

  test('a plain member → 403 naming edit:org', async () => {
    const t = await makeTestApp()
    const [olga, mia] = await t.users('olga', 'mia')
    await makeOrg(t, 'acme', { owner: olga, members: [mia] })
    const res = await t.as(mia).send('PATCH', `${API}/orgs/acme`, { description: 'x' })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.permissionRequired('edit:org'))
  })

  test('a bad visibility → 422 and nothing changes', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    expect((await t.as(olga).send('PATCH', `${API}/orgs/acme`, { description: 'x', visibility: 'bad' })).status).toBe(422)
    expect((await (await t.as(olga).get(`${API}/orgs/acme`)).json()).description).toBe('')
  })

  test('unknown org → 404', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    expect((await t.as(olga).send('PATCH', `${API}/orgs/nope`, { description: 'x' })).status).toBe(404)
  })
})

describe('DELETE /orgs/{org}', () => {
  test('the last owner deletes the org → 204, it is gone with its memberships', async () => {
    const t = await makeTestApp()
    const [olga, mia] = await t.users('olga', 'mia')
    await makeOrg(t, 'acme', { owner: olga, members: [mia] })
    expect((await t.as(olga).delete(`${API}/orgs/acme`)).status).toBe(204)
    expect((await t.as(olga).get(`${API}/orgs/acme`)).status).toBe(404)
    expect(await (await t.as(mia).get(`${API}/user/orgs`)).json()).toEqual([])
  })

  test('an owner while another owner remains → 403 (orgLastAdmin)', async () => {
    const t = await makeTestApp()
    const [olga, otto] = await t.users('olga', 'otto')
    await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
    const res = await t.as(olga).delete(`${API}/orgs/acme`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(ConditionMessages.notLastAdmin)
  })

  test('an owner while an admin remains → 403 (orgLastAdmin)', async () => {
    const t = await makeTestApp()
    const [olga, ada] = await t.users('olga', 'ada')
    await makeOrg(t, 'acme', { owner: olga, admins: [ada] })
    expect((await t.as(olga).delete(`${API}/orgs/acme`)).status).toBe(403)
  })

  test('an admin (lacks delete:org) → 403; a member → 403', async () => {
    const t = await makeTestApp()
    const [olga, ada, mia] = await t.users('olga', 'ada', 'mia')
    await makeOrg(t, 'acme', { owner: olga, admins: [ada], members: [mia] })
    expect((await t.as(ada).delete(`${API}/orgs/acme`)).status).toBe(403)
    expect((await t.as(mia).delete(`${API}/orgs/acme`)).status).toBe(403)
  })

  test('a site admin deletes any org → 204', async () => {
    const t = await makeTestApp()
    const [olga, otto] = await t.users('olga', 'otto')
    await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
    expect((await t.as(await t.admin()).delete(`${API}/orgs/acme`)).status).toBe(204)
  })
})

describe('token scopes', () => {
  test('a read:organization token may read an org route but not PATCH it → 403 naming the scope', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    const { plaintext } = await mintToken(t.deps.db, olga.user.id, { name: 'ro', scopes: ['read:organization'] })
    expect((await t.request('GET', `${API}/orgs/acme/teams`, { token: plaintext })).status).toBe(200)
    const res = await t.request('PATCH', `${API}/orgs/acme`, { token: plaintext, body: { description: 'x' } })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toContain('write:organization')
  })
})

describe('GET /orgs/{org}/user/{username}', () => {
  test('a member asks for an active user → 200 Profile', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga', 'bob')
    await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).get(`${API}/orgs/acme/user/bob`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      name: 'bob',
      full_name: '',
      email: 'bob@example.com',
      website: '',
      location: '',
      language: '',
      description: '',
      keep_email_private: false,
    })
  })

  test('an unknown or inactive user → 400', async () => {
    const t = await makeTestApp()
    const [olga, bob] = await t.users('olga', 'bob')
    await makeOrg(t, 'acme', { owner: olga })
    await t.deps.db.write((tx) => updateUser(tx, bob.user.id, { isActive: false }))
    expect((await t.as(olga).get(`${API}/orgs/acme/user/nobody`)).status).toBe(400)
    const res = await t.as(olga).get(`${API}/orgs/acme/user/bob`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.userNotUsable)
  })
})

describe('GET /orgs/{org}/is-owner', () => {
  test('owner → 200 empty; admin → 403; site admin who is not an owner → 403', async () => {
    const t = await makeTestApp()
    const [olga, ada] = await t.users('olga', 'ada')
    await makeOrg(t, 'acme', { owner: olga, admins: [ada] })
    const res = await t.as(olga).get(`${API}/orgs/acme/is-owner`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect((await t.as(ada).get(`${API}/orgs/acme/is-owner`)).status).toBe(403)
    expect((await t.as(await t.admin()).get(`${API}/orgs/acme/is-owner`)).status).toBe(403)
  })
})

describe("the caller's organizations", () => {
  test('GET /user/orgs includes private memberships and hidden orgs, by name, with X-Total-Count and Link', async () => {
    const t = await makeTestApp()
    const [olga, bob] = await t.users('olga', 'bob')
    await makeOrg(t, 'zeta', { owner: olga, members: [bob], visibility: 'private' })
    await makeOrg(t, 'acme', { owner: olga, members: [bob] })
    const res = await t.as(bob).get(`${API}/user/orgs?limit=1`)
    expect(res.status).toBe(200)
    expect((await res.json()).map((o: { username: string }) => o.username)).toEqual(['acme'])
    expect(res.headers.get('x-total-count')).toBe('2')
    expect(res.headers.get('link')).toBe(
      `<${t.config.publicUrl}/api/v1/user/orgs?limit=1&page=2>; rel="next",<${t.config.publicUrl}/api/v1/user/orgs?limit=1&page=2>; rel="last"`,
    )
  })

  test('GET /user/orgs anonymously → 401', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', `${API}/user/orgs`)).status).toBe(401)
  })

  test('GET /users/{u}/orgs: others see only public memberships of public orgs; the user and site admins see all', async () => {
    const t = await makeTestApp()
    const [olga, bob, carol] = await t.users('olga', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: olga, members: [bob] })
    await makeOrg(t, 'open', { owner: olga, members: [bob], publicMembers: [bob] })
    await makeOrg(t, 'ltd', { owner: olga, members: [bob], publicMembers: [bob], visibility: 'limited' })
    const names = async (res: Response) => (await res.json()).map((o: { username: string }) => o.username)
    expect(await names(await t.as(carol).get(`${API}/users/bob/orgs`))).toEqual(['open'])
    expect(await names(await t.as(bob).get(`${API}/users/bob/orgs`))).toEqual(['acme', 'ltd', 'open'])
    expect(await names(await t.as(await t.admin()).get(`${API}/users/bob/orgs`))).toEqual(['acme', 'ltd', 'open'])
  })

  test('GET /users/{u}/orgs of a private user by someone else → 404; by herself → 200', async () => {
    const t = await makeTestApp()
    const [olga, carol] = await t.users('olga', 'carol')
    await t.deps.db.write((tx) => updateUser(tx, olga.user.id, { visibility: 2 }))
    expect((await t.as(carol).get(`${API}/users/olga/orgs`)).status).toBe(404)
    expect((await t.as(olga).get(`${API}/users/olga/orgs`)).status).toBe(200)
  })

  test('a saved page size replaces the default limit', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'one', { owner: olga })
    await makeOrg(t, 'two', { owner: olga })
    await t.deps.db.write((tx) => updateUser(tx, olga.user.id, { pageSize: 1 }))
    expect((await (await t.as(olga).get(`${API}/user/orgs`)).json()).length).toBe(1)
    expect((await (await t.as(olga).get(`${API}/user/orgs?limit=5`)).json()).length).toBe(2)
  })

  test('GET /users/{u}/orgs of an unknown user → 404; anonymously → 401', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    expect((await t.as(olga).get(`${API}/users/nobody/orgs`)).status).toBe(404)
    expect((await t.request('GET', `${API}/users/olga/orgs`)).status).toBe(401)
  })

  test("GET /user/settings/organizations lists the caller's orgs", async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga, visibility: 'private' })
    const res = await t.as(olga).get(`${API}/user/settings/organizations`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject([{ username: 'acme', orgType: 2 }])
  })
})

describe('/user/settings/organizations/create', () => {
  test('GET: may create → 200; flag off → 403', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.deps.db.write((tx) => updateUser(tx, bob.user.id, { allowCreateOrganization: false }))
    expect((await t.as(alice).get(`${API}/user/settings/organizations/create`)).status).toBe(200)
    expect((await t.as(bob).get(`${API}/user/settings/organizations/create`)).status).toBe(403)
  })

  test('POST multipart with an avatar → 200 message; the org exists with the avatar served', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const form = new FormData()
    form.set('org_name', 'formorg')
    form.set('full_name', 'Form Org')
    form.set('visibility', 'limited')
    form.set('avatar', new File([PNG], 'a.png', { type: 'image/png' }))
    const res = await t.as(alice).send('POST', `${API}/user/settings/organizations/create`, form)
    expect(res.status).toBe(200)
    expect((await res.json()).message).toContain('formorg')
    expect(await (await t.as(alice).get(`${API}/orgs/formorg`)).json()).toMatchObject({ full_name: 'Form Org', visibility: 'limited' })
    const avatar = await t.request('GET', '/avatars/formorg')
    expect(avatar.headers.get('content-type')).toBe('image/png')
  })

  test('POST with an avatar that is not an image → 422 and no org', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const form = new FormData()
    form.set('org_name', 'formorg')
    form.set('avatar', new File(['<svg/>'], 'a.png', { type: 'image/png' }))
    expect((await t.as(alice).send('POST', `${API}/user/settings/organizations/create`, form)).status).toBe(422)
    expect((await t.as(alice).get(`${API}/orgs/formorg`)).status).toBe(404)
  })

  test('POST without org_name → 422; a taken name → 422; not permitted → 403; anonymous → 401', async () => {
    const t = await makeTestApp({ PLATFORM_DISABLE_REGULAR_ORG_CREATION: 'true' })
    const [alice] = await t.users('alice')
    const admin = await t.admin()
    const form = (name?: string) => {
      const f = new FormData()
      if (name) f.set('org_name', name)
      f.set('description', 'd')
      return f
    }
    expect((await t.as(admin).send('POST', `${API}/user/settings/organizations/create`, form())).status).toBe(422)
    expect((await t.as(admin).send('POST', `${API}/user/settings/organizations/create`, form('alice'))).status).toBe(422)
    expect((await t.as(alice).send('POST', `${API}/user/settings/organizations/create`, form('neworg'))).status).toBe(403)
    expect((await t.request('POST', `${API}/user/settings/organizations/create`, { body: form('neworg') })).status).toBe(401)
  })
})
