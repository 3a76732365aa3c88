import { describe, expect, test } from 'bun:test'
import { registrationFixture } from '../clusters/support'
import { makeOrg } from '../orgs/support'
import { basic, makeTestApp, PASSWORD } from '../support/app'
import { auditAt, eventOf } from './support'

const id = (requestId: string) => ({ 'x-request-id': requestId })

describe('state-changing API calls', () => {
  test('a site admin creates a user → an api event: actor, token by name and id, route template, 201 allowed', async () => {
    const t = await makeTestApp()
    const root = await t.admin()
    const res = await t
      .as(root)
      .send('POST', '/api/v1/admin/users', { username: 'bob', email: 'bob@example.com', password: 'password123' }, id('create-bob'))
    expect(res.status).toBe(201)
    const tokenId = (await t.deps.db.read.query.accessTokens.findFirst({ where: (tk, { eq }) => eq(tk.uid, root.user.id) }))!.id
    expect(await eventOf(t, 'create-bob')).toMatchObject({
      kind: 'api',
      actor: { id: root.user.id, login: 'root' },
      credential: { kind: 'token', name: 'test', id: tokenId },
      method: 'POST',
      route: '/api/v1/admin/users',
      target: {},
      outcome: { status: 201, result: 'allowed' },
    })
  })

  test('reads leave no event: GETs of users, orgs and the audit itself', async () => {
    const t = await makeTestApp()
    const root = await t.admin()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice! })
    for (const path of ['/api/v1/user', '/api/v1/orgs/acme', '/api/v1/orgs/acme/members', '/api/v1/users/alice', '/api/v1/admin/audit'])
      expect((await t.as(alice!).get(path)).status).toBeLessThan(500)
    expect(await auditAt(t, root)).toEqual([])
  })

  test('an anonymous write → 401, recorded as refused with no actor and no credential', async () => {
    const t = await makeTestApp()
    const res = await t.request('POST', '/api/v1/orgs', { body: { username: 'acme' }, headers: id('anon-1') })
    expect(res.status).toBe(401)
    expect(await eventOf(t, 'anon-1')).toMatchObject({
      actor: null,
      credential: { kind: 'none' },
      route: '/api/v1/orgs',
      outcome: { status: 401, result: 'refused' },
    })
  })

  test('a write with a wrong token, with a body or without → 401 refused, the credential named by kind only', async () => {
    const t = await makeTestApp()
    const wrong = 'f'.repeat(40)
    expect((await t.request('DELETE', '/api/v1/orgs/acme', { token: wrong, headers: id('bad-token') })).status).toBe(401)
    const event = await eventOf(t, 'bad-token')
    expect(event).toMatchObject({ actor: null, credential: { kind: 'token' }, target: { org: 'acme' }, outcome: { status: 401 } })
    expect(event.credential).toEqual({ kind: 'token' })
    // The body parser refuses the credential before the route's own hooks run.
    const withBody = await t.request('POST', '/api/v1/orgs', { token: wrong, body: { username: 'acme' }, headers: id('bad-token-body') })
    expect(withBody.status).toBe(401)
    expect(await eventOf(t, 'bad-token-body')).toMatchObject({ actor: null, route: '/api/v1/orgs', outcome: { status: 401 } })
  })

  test('a write the guard forbids → 403 refused, with the caller and the org it aimed at', async () => {
    const t = await makeTestApp()
    const [alice, mallory] = await t.users('alice', 'mallory')
    await makeOrg(t, 'acme', { owner: alice!, members: [mallory!] })
    expect((await t.as(mallory!).send('DELETE', '/api/v1/orgs/acme', undefined, id('del-acme'))).status).toBe(403)
    expect(await eventOf(t, 'del-acme')).toMatchObject({
      actor: { login: 'mallory' },
      org: 'acme',
      route: '/api/v1/orgs/{org}',
      outcome: { status: 403, result: 'refused' },
    })
  })

  test('a site admin acting as alice (sudo) → the event names alice and the admin as realLogin', async () => {
    const t = await makeTestApp()
    const root = await t.admin()
    await t.users('alice')
    const res = await t.as(root).send('POST', '/api/v1/orgs?sudo=alice', { username: 'acme' }, id('sudo-1'))
    expect(res.status).toBe(201)
    expect(await eventOf(t, 'sudo-1')).toMatchObject({
      actor: { login: 'alice', realLogin: 'root' },
      org: 'acme',
      outcome: { status: 201, result: 'allowed' },
    })
  })

  test('a user deletes an access token → event with the token by name in the target, Basic credential', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    const auth = { authorization: basic('alice', PASSWORD) }
    const made = await t.request('POST', '/api/v1/users/alice/tokens', { body: { name: 'ci', scopes: ['all'] }, headers: auth })
    expect(made.status).toBe(201)
    const res = await t.request('DELETE', '/api/v1/users/alice/tokens/ci', { headers: { ...auth, ...id('del-token') } })
    expect(res.status).toBe(204)
    expect(await eventOf(t, 'del-token')).toMatchObject({
      actor: { login: 'alice' },
      credential: { kind: 'basic' },
      route: '/api/v1/users/{username}/tokens/{token}',
      target: { username: 'alice', token: 'ci' },
      outcome: { status: 204, result: 'allowed' },
    })
  })

  test("an org admin removes a member → event in the org's trail", async () => {
    const t = await makeTestApp()
    const [olga, mia] = await t.users('olga', 'mia')
    await makeOrg(t, 'acme', { owner: olga!, members: [mia!] })
    expect((await t.as(olga!).send('DELETE', '/api/v1/orgs/acme/members/mia', undefined, id('rm-mia'))).status).toBe(204)
    const [event] = await auditAt(t, olga!, '/api/v1/orgs/acme/audit')
    expect(event).toMatchObject({
      requestId: 'rm-mia',
      actor: { login: 'olga' },
      org: 'acme',
      route: '/api/v1/orgs/{org}/members/{username}',
      target: { org: 'acme', username: 'mia' },
      outcome: { status: 204, result: 'allowed' },
    })
  })

  test('a team is granted a cluster of the org → event with the org and the cluster', async () => {
    const t = await makeTestApp()
    const [olga, mia] = await t.users('olga', 'mia')
    const { org, membersTeam } = await makeOrg(t, 'acme', { owner: olga!, members: [mia!] })
    await registrationFixture(t, org, 'prod', {
      server: 'https://127.0.0.1:1',
      caData: '',
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'x' },
    })
    const res = await t.as(olga!).send('PUT', `/api/v1/teams/${membersTeam!.id}/clusters/prod`, undefined, id('grant-1'))
    expect(res.status).toBe(204)
    expect(await eventOf(t, 'grant-1')).toMatchObject({
      org: 'acme',
      cluster: 'acme/prod',
      route: '/api/v1/teams/{teamId}/clusters/{cluster}',
      outcome: { status: 204, result: 'allowed' },
    })
  })
})
