import { describe, expect, test } from 'bun:test'
import { updateUser } from '../../src/identity/store'
import { Messages } from '../../src/orgs/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/**
 * `GET /orgs/{org}/user/{username}` must not be a way around the visibility of private users:
 * anyone may create an org, so otherwise anyone could look up every private profile.
 */

const API = '/api/v1'

describe('GET /orgs/{org}/user/{username} and private users', () => {
  test('an owner of her own fresh org asks for a private user outside it → 400 exactly as for an unknown user', async () => {
    const t = await makeTestApp()
    const [mallory, priv] = await t.users('mallory', 'priv')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    await makeOrg(t, 'probe', { owner: mallory })
    const hidden = await t.as(mallory).get(`${API}/orgs/probe/user/priv`)
    const unknown = await t.as(mallory).get(`${API}/orgs/probe/user/nobody`)
    expect(hidden.status).toBe(400)
    expect(await hidden.json()).toEqual(await unknown.json())
    expect((await t.as(mallory).get(`${API}/users/priv`)).status).toBe(404)
  })

  test('a member asks for a private user who is in the same org → 200 Profile', async () => {
    const t = await makeTestApp()
    const [olga, priv] = await t.users('olga', 'priv')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    await makeOrg(t, 'acme', { owner: olga, members: [priv] })
    const res = await t.as(olga).get(`${API}/orgs/acme/user/priv`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'priv' })
  })

  test('a private user asks for herself, and a site admin asks for her → 200', async () => {
    const t = await makeTestApp()
    const root = await t.admin()
    const [priv] = await t.users('priv')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    await makeOrg(t, 'own', { owner: priv })
    await makeOrg(t, 'hq', { owner: root })
    expect((await t.as(priv).get(`${API}/orgs/own/user/priv`)).status).toBe(200)
    expect((await t.as(root).get(`${API}/orgs/hq/user/priv`)).status).toBe(200)
  })

  test('an organization name → 400 like an unknown user', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).get(`${API}/orgs/acme/user/acme`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.userNotUsable)
  })
})

describe('GET /orgs/{org}/user/{username} for a signed-in non-member', () => {
  test('a non-member asks in a public org → 200 Profile with the email rules of docs/decisions.md §2', async () => {
    const t = await makeTestApp()
    const [olga, nina, bob] = await t.users('olga', 'nina', 'bob')
    await t.deps.db.write((tx) => updateUser(tx, bob.user.id, { keepEmailPrivate: true }))
    await makeOrg(t, 'acme', { owner: olga, members: [bob] })
    const res = await t.as(nina).get(`${API}/orgs/acme/user/bob`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ name: 'bob', email: `bob@noreply.${new URL(t.config.publicUrl).hostname}` })
  })

  test('a non-member asks in a private org → 404 as for an org that does not exist', async () => {
    const t = await makeTestApp()
    const [olga, nina] = await t.users('olga', 'nina', 'bob')
    await makeOrg(t, 'secret', { owner: olga, visibility: 'private' })
    const hidden = await t.as(nina).get(`${API}/orgs/secret/user/bob`)
    expect(hidden.status).toBe(404)
    expect(await hidden.json()).toEqual(await (await t.as(nina).get(`${API}/orgs/nowhere/user/bob`)).json())
  })

  test('a non-member asks in a public org for a private member → 400 as for an unknown user', async () => {
    const t = await makeTestApp()
    const [olga, nina, priv] = await t.users('olga', 'nina', 'priv')
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
    await makeOrg(t, 'acme', { owner: olga, members: [priv] })
    const res = await t.as(nina).get(`${API}/orgs/acme/user/priv`)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.userNotUsable)
  })
})

describe('GET /orgs/{org}/user/{username} and emails (docs/decisions.md §2)', () => {
  test('the user themself and a site admin see the real email of a user who keeps it private; another member sees noreply', async () => {
    const t = await makeTestApp()
    const [olga, priv] = await t.users('olga', 'priv')
    const root = await t.admin()
    await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { keepEmailPrivate: true }))
    await makeOrg(t, 'acme', { owner: olga, members: [priv] })
    const emailSeenBy = async (who: typeof olga) =>
      ((await (await t.as(who).get(`${API}/orgs/acme/user/priv`)).json()) as { email: string }).email
    expect(await emailSeenBy(priv)).toBe('priv@example.com')
    expect(await emailSeenBy(root)).toBe('priv@example.com')
    expect(await emailSeenBy(olga)).toBe(`priv@noreply.${new URL(t.config.publicUrl).hostname}`)
  })

  test('a user who shows their email: every signed-in caller sees it, as on /users/{username}', async () => {
    const t = await makeTestApp()
    const [olga, open] = await t.users('olga', 'open')
    await t.deps.db.write((tx) => updateUser(tx, open.user.id, { keepEmailPrivate: false }))
    await makeOrg(t, 'acme', { owner: olga, members: [open] })
    const profile = (await (await t.as(olga).get(`${API}/orgs/acme/user/open`)).json()) as { email: string }
    const user = (await (await t.as(olga).get(`${API}/users/open`)).json()) as { email: string }
    expect(profile.email).toBe('open@example.com')
    expect(user.email).toBe(profile.email)
  })
})
