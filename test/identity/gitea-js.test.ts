import { describe, expect, test } from 'bun:test'
import { giteaApi } from 'gitea-js'
import { basic, makeTestApp, PASSWORD } from '../support/app'

/** gitea-js 1.23.0, unchanged, as a third-party client against a real port. */
describe('gitea-js against our server', () => {
  test('search, get user, current user', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice', 'bob')
    const base = await t.listen()
    const api = giteaApi(base, { token: alice.token })
    const search = await api.users.userSearch({ q: 'bo', limit: 10 })
    expect(search.data.ok).toBe(true)
    expect(search.data.data?.map((u) => u.login)).toEqual(['bob'])
    const bob = await api.users.userGet('bob')
    expect(bob.data).toMatchObject({ login: 'bob', email: 'bob@example.com' })
    const me = await api.user.userGetCurrent()
    expect(me.data).toMatchObject({ login: 'alice', is_admin: false })
  })

  /** Alice (with her test token `test`) on a real port, a gitea-js client and her Basic credentials. */
  async function tokensViaBasic() {
    const t = await makeTestApp()
    await t.users('alice')
    const base = await t.listen()
    const api = giteaApi(base)
    const auth = { headers: { Authorization: basic('alice', PASSWORD) } }
    return { base, api, auth }
  }

  test('tokens via Basic: create → 201 with the plaintext in sha1 and the scopes asked for', async () => {
    const { api, auth } = await tokensViaBasic()
    const created = await api.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['all'] }, auth)
    expect(created.status).toBe(201)
    expect(created.data.sha1).toMatch(/^[0-9a-f]{40}$/)
    const second = await api.users.userCreateToken('alice', { name: 'second', scopes: ['read:user'] }, auth)
    expect(second.data.scopes).toEqual(['read:user'])
  })

  test('tokens via Basic: the list names them without their plaintext', async () => {
    const { api, auth } = await tokensViaBasic()
    await api.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['all'] }, auth)
    const list = await api.users.userGetTokens('alice', {}, auth)
    expect(list.data.map((x) => x.name)).toContain('from-gitea-js')
    expect(list.data.every((x) => x.sha1 === '')).toBe(true)
  })

  test('tokens via Basic: delete by id and by name → 204 each, and only the others are left', async () => {
    const { api, auth } = await tokensViaBasic()
    const created = await api.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['all'] }, auth)
    await api.users.userCreateToken('alice', { name: 'second', scopes: ['read:user'] }, auth)
    expect((await api.users.userDeleteAccessToken('alice', String(created.data.id), auth)).status).toBe(204)
    expect((await api.users.userDeleteAccessToken('alice', 'second', auth)).status).toBe(204)
    const after = await api.users.userGetTokens('alice', {}, auth)
    expect(after.data.map((x) => x.name)).toEqual(['test'])
  })

  test('tokens via Basic: a deleted token → 401', async () => {
    const { base, api, auth } = await tokensViaBasic()
    const created = await api.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['all'] }, auth)
    await api.users.userDeleteAccessToken('alice', String(created.data.id), auth)
    const withToken = giteaApi(base, { token: created.data.sha1 })
    const refused = await withToken.user.userGetCurrent().catch((e: Response) => e)
    expect((refused as Response).status).toBe(401)
  })

  test('emails: list, add, delete', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const api = giteaApi(await t.listen(), { token: alice.token })
    expect((await api.user.userListEmails()).data).toEqual([{ email: 'alice@example.com', verified: true, primary: true }])
    const added = await api.user.userAddEmail({ emails: ['alice2@x.test'] })
    expect(added.status).toBe(201)
    expect(added.data.map((e) => e.email)).toEqual(['alice@example.com', 'alice2@x.test'])
    expect((await api.user.userDeleteEmail({ emails: ['alice2@x.test'] })).status).toBe(204)
    const again = await api.user.userDeleteEmail({ emails: ['alice2@x.test'] }).catch((e: Response) => e)
    expect((again as Response).status).toBe(404)
  })

  /** Alice following bob (put with gitea-js, status kept), a client for each. */
  async function aliceFollowsBob() {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const base = await t.listen()
    const asAlice = giteaApi(base, { token: alice.token })
    const asBob = giteaApi(base, { token: bob.token })
    const put = await asAlice.user.userCurrentPutFollow('bob')
    return { asAlice, asBob, put }
  }

  test("follow: put → 204; the follower's check and list show the followed user", async () => {
    const { asAlice, put } = await aliceFollowsBob()
    expect(put.status).toBe(204)
    expect((await asAlice.user.userCurrentCheckFollowing('bob')).status).toBe(204)
    expect((await asAlice.user.userCurrentListFollowing()).data.map((u) => u.login)).toEqual(['bob'])
  })

  test("follow: the followed user's follower lists, the follower's following list and the check by name show it", async () => {
    const { asBob } = await aliceFollowsBob()
    expect((await asBob.user.userCurrentListFollowers()).data.map((u) => u.login)).toEqual(['alice'])
    expect((await asBob.users.userListFollowers('bob')).data.map((u) => u.login)).toEqual(['alice'])
    expect((await asBob.users.userListFollowing('alice')).data.map((u) => u.login)).toEqual(['bob'])
    expect((await asBob.users.userCheckFollowing('alice', 'bob')).status).toBe(204)
  })

  test('follow: the check the other way round → 404', async () => {
    const { asBob } = await aliceFollowsBob()
    const notFollowing = await asBob.user.userCurrentCheckFollowing('alice').catch((e: Response) => e)
    expect((notFollowing as Response).status).toBe(404)
  })

  test('follow: delete → 204, and the following list is empty', async () => {
    const { asAlice } = await aliceFollowsBob()
    expect((await asAlice.user.userCurrentDeleteFollow('bob')).status).toBe(204)
    expect((await asAlice.user.userCurrentListFollowing()).data).toEqual([])
  })
})
