import { describe, expect, test } from 'bun:test'
import { Messages as ConditionMessages } from '../../src/identity/settings/service'
import { ownerIds } from '../../src/orgs/store'
import { makeOrg, PNG } from '../orgs/support'
import { makeTestApp, PASSWORD } from '../support/app'

/** Deleting accounts and odd create forms leave no ownerless orgs and no 500s. */

const API = '/api/v1'
const deleteAccount = `${API}/user/settings/account/delete?password=${encodeURIComponent(PASSWORD)}`

describe('account deletion and the orgs the user owns', () => {
  test('the sole owner of an org deletes her account → 409 with the sole-owner message; account and ownership stay', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    const { org } = await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).send('POST', deleteAccount)
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({ message: ConditionMessages.soleOwner })
    expect((await t.as(olga).get(`${API}/user`)).status).toBe(200)
    expect(await ownerIds(t.deps.db.read, org.id)).toEqual([olga.user.id])
  })

  test('one of two owners deletes her account → 200; the other owner remains and her memberships are gone', async () => {
    const t = await makeTestApp()
    const [olga, otto] = await t.users('olga', 'otto')
    const { org } = await makeOrg(t, 'acme', { owner: olga, owners: [otto] })
    expect((await t.as(olga).send('POST', `${API}/orgs/acme/subscription`)).status).toBe(200)
    expect((await t.as(olga).send('POST', deleteAccount)).status).toBe(200)
    expect(await ownerIds(t.deps.db.read, org.id)).toEqual([otto.user.id])
    const members = await (await t.as(otto).get(`${API}/orgs/acme/members`)).json()
    expect(members.map((m: { login: string }) => m.login)).toEqual(['otto'])
  })
})

describe('POST /user/settings/organizations/create with an avatar', () => {
  test('an over-long org_name with an avatar → 422 (not 500), no org made', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const name = 'a'.repeat(60)
    const form = new FormData()
    form.append('org_name', name)
    form.append('avatar', new Blob([PNG], { type: 'image/png' }), 'a.png')
    const res = await t.as(alice).send('POST', `${API}/user/settings/organizations/create`, form)
    expect(res.status).toBe(422)
    expect((await t.as(alice).get(`${API}/orgs/${name}`)).status).toBe(404)
  })
})
