import { describe, expect, test } from 'bun:test'
import { Messages as AuthzMessages } from '../../src/authz/authorize'
import { insertUser } from '../../src/identity/store'
import { mintToken } from '../../src/identity/tokens/service'
import { Messages } from '../../src/inbox/service'
import { Messages as StoreMessages } from '../../src/inbox/store'
import { registrationFixture } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

const API = '/api/v1'
const cluster = { scope: 'cluster', clusterUID: 'c-1', clusterName: 'prod', clusterOwnerID: 7 }
const namespace = { ...cluster, scope: 'namespace', namespaceUID: 'ns-1', namespaceName: 'web' }
/** Alice's cluster `prod`, registered with uid c-1 (never asked: subscriptions only need the registration). */
const prodCluster = (t: TestApp, owner: TestUser) =>
  registrationFixture(
    t,
    owner.user,
    'prod',
    {
      server: 'https://127.0.0.1:1',
      caData: '',
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'x' },
    },
    'c-1',
  )
const resource = {
  ...namespace,
  scope: 'resource',
  apiGroup: 'apps',
  version: 'v1',
  resource: 'deployments',
  resourceName: 'api',
  resourceUID: 'r-1',
}

describe('organization subscription', () => {
  /** acme (owner alice, member bob), and bob's subscribe request to it. */
  async function bobSubscribes() {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    const { org } = await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const before = await t.as(bob).get(`${API}/orgs/acme/subscription`)
    const res = await t.as(bob).send('POST', `${API}/orgs/acme/subscription`)
    return { t, bob: bob!, org, before, res }
  }

  test('not subscribed → GET 404', async () => {
    const { before } = await bobSubscribes()
    expect(before.status).toBe(404)
  })

  test('a member subscribes → 200 with an empty body; again → 200; GET → 200', async () => {
    const { t, bob, res } = await bobSubscribes()
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/subscription`)).status).toBe(200)
    expect((await t.as(bob).get(`${API}/orgs/acme/subscription`)).status).toBe(200)
  })

  test('the inbox list shows the org subscription', async () => {
    const { t, bob, org } = await bobSubscribes()
    const list = await (await t.as(bob).get(`${API}/user/inbox/subscriptions`)).json()
    expect(list).toMatchObject([
      {
        subscriberID: bob.user.id,
        subscriberType: 'user',
        scope: 'org',
        orgID: String(org.id),
        orgName: 'acme',
        clusterUID: '',
        clusterName: '',
        clusterOwnerID: 0,
      },
    ])
    expect(list[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  test('DELETE → 200; then GET → 404 "not subscribed"', async () => {
    const { t, bob } = await bobSubscribes()
    expect((await t.as(bob).delete(`${API}/orgs/acme/subscription`)).status).toBe(200)
    const gone = await t.as(bob).get(`${API}/orgs/acme/subscription`)
    expect(gone.status).toBe(404)
    expect((await gone.json()).message).toBe(Messages.notSubscribed)
  })

  test('leaving the org ends the org subscription', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    await t.as(bob).send('POST', `${API}/orgs/acme/subscription`)
    await t.as(bob).send('POST', `${API}/orgs/acme/members/action/leave`)
    expect(await (await t.as(bob).get(`${API}/user/inbox/subscriptions`)).json()).toEqual([])
  })

  test("a user's name instead of an org, or an unknown name → 400", async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await t.as(alice).send(method, `${API}/orgs/alice/subscription`)
      expect(res.status).toBe(400)
      expect((await res.json()).message).toBe(AuthzMessages.notOrg)
    }
    expect((await t.as(alice).send('POST', `${API}/orgs/nope/subscription`)).status).toBe(400)
  })

  test('a caller that is not an individual user (a bot account) → 403', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const bot = await t.deps.db.write((tx) => insertUser(tx, { name: 'robot', lowerName: 'robot', email: 'robot@example.com', type: 4 }))
    const { plaintext } = await mintToken(t.deps.db, bot.id, { name: 'bot', scopes: ['all'] })
    const res = await t.request('POST', `${API}/orgs/acme/subscription`, { token: plaintext })
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(AuthzMessages.individualRequired)
  })

  test('a non-member of a public org → 403; of a private org → 400 as for no org; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, carol] = await t.users('alice', 'carol')
    await makeOrg(t, 'acme', { owner: alice })
    await makeOrg(t, 'secret', { owner: alice, visibility: 'private' })
    expect((await t.as(carol).send('POST', `${API}/orgs/acme/subscription`)).status).toBe(403)
    expect((await t.as(carol).send('POST', `${API}/orgs/secret/subscription`)).status).toBe(400)
    expect((await t.request('POST', `${API}/orgs/acme/subscription`)).status).toBe(401)
  })
})

describe('GET|POST /user/inbox/subscriptions', () => {
  test('cluster, namespace and resource subscriptions → 201 each; the same one twice → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await prodCluster(t, alice)
    for (const body of [cluster, namespace, resource]) {
      const res = await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, body)
      expect(res.status).toBe(201)
      expect(await res.json()).toMatchObject({ ...body, subscriberID: alice.user.id })
    }
    const again = await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, resource)
    expect(again.status).toBe(422)
    expect((await again.json()).message).toBe(StoreMessages.duplicate)
  })

  test('narrow fields sent with a wide scope are dropped', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await prodCluster(t, alice)
    const res = await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, { ...resource, scope: 'cluster' })
    expect(await res.json()).toMatchObject({ scope: 'cluster', namespaceUID: '', resourceUID: '' })
  })

  test.each([
    [{ ...namespace, namespaceUID: '' }, 'namespaceUID'],
    [{ ...resource, resourceUID: undefined }, 'resourceUID'],
    [{ ...cluster, clusterUID: undefined }, 'clusterUID'],
    [{ ...cluster, scope: 'org' }, 'scope'],
  ])('a missing or wrong field → 422 naming it (%#)', async (body, field) => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await prodCluster(t, alice)
    const res = await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, body)
    expect(res.status).toBe(422)
    expect((await res.json()).errors.map((e: { field: string }) => e.field)).toContain(field)
    expect(await (await t.as(alice).get(`${API}/user/inbox/subscriptions`)).json()).toEqual([])
  })

  const filters: [string, string, number][] = [
    ['scope', 'namespace', 1],
    ['scope', 'org', 1],
    ['orgName', 'acme', 1],
    ['clusterName', 'prod', 3],
    ['clusterUID', 'c-1', 3],
    ['namespaceName', 'web', 2],
    ['namespaceUID', 'ns-1', 2],
    ['apiGroup', 'apps', 1],
    ['version', 'v1', 1],
    ['resource', 'deployments', 1],
    ['resourceName', 'api', 1],
    ['resourceUID', 'r-1', 1],
    ['clusterName', 'pro', 0],
  ]
  for (const [name, value, count] of filters)
    test(`filter ${name}=${value} matches exactly → ${count}`, async () => {
      const t = await makeTestApp()
      const [alice] = await t.users('alice')
      await prodCluster(t, alice)
      await makeOrg(t, 'acme', { owner: alice })
      for (const body of [cluster, namespace, resource]) await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, body)
      await t.as(alice).send('POST', `${API}/orgs/acme/subscription`)
      const res = await t.as(alice).get(`${API}/user/inbox/subscriptions?${name}=${value}`)
      expect(res.status).toBe(200)
      expect((await res.json()).length).toBe(count)
    })

  test('filter orgID matches the org subscription', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await prodCluster(t, alice)
    const { org } = await makeOrg(t, 'acme', { owner: alice })
    await t.as(alice).send('POST', `${API}/orgs/acme/subscription`)
    expect((await (await t.as(alice).get(`${API}/user/inbox/subscriptions?orgID=${org.id}`)).json()).length).toBe(1)
  })

  test('each caller sees only their own subscriptions; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await prodCluster(t, alice)
    await t.as(alice).send('POST', `${API}/user/inbox/subscriptions`, cluster)
    expect(await (await t.as(bob).get(`${API}/user/inbox/subscriptions`)).json()).toEqual([])
    expect((await t.request('GET', `${API}/user/inbox/subscriptions`)).status).toBe(401)
    expect((await t.request('POST', `${API}/user/inbox/subscriptions`, { body: cluster })).status).toBe(401)
  })

  test("a cluster the caller may not use (another user's, or none with that uid) → 404, nothing stored", async () => {
    const t = await makeTestApp()
    const [alice, eve] = await t.users('alice', 'eve')
    await prodCluster(t, alice)
    for (const body of [cluster, namespace, resource, { ...cluster, clusterUID: 'no-such-cluster' }]) {
      const res = await t.as(eve).send('POST', `${API}/user/inbox/subscriptions`, body)
      expect(res.status).toBe(404)
    }
    expect(await (await t.as(eve).get(`${API}/user/inbox/subscriptions`)).json()).toEqual([])
  })
})
