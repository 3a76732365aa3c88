import { describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import type { Deps } from '../../src/deps'
import { guard } from '../../src/http/guard'
import { deadRegistrationFixture } from '../clusters/support'
import { makeTestApp, testRequest } from '../support/app'

/**
 * What each permission kind hands its handler, checked twice: by the compiler (`tsc --noEmit`
 * covers test/, so each `@ts-expect-error` below fails the type check the day the guard types a
 * field the route does not get), and at run time (the field is really absent).
 */
const probes = (deps: Deps) =>
  new Elysia({ prefix: '/probe' })
    .use(guard(deps))
    .get(
      '/public',
      (context) => ({
        actor: context.actor?.user.name ?? null,
        // @ts-expect-error a public route has no `me`: it reads the optional `actor`
        me: context.me ?? null,
      }),
      { public: true },
    )
    .get(
      '/signed-in',
      (context) => ({
        me: context.me.user.name,
        // @ts-expect-error a route without an org has no `scope`
        scope: context.scope ?? null,
      }),
      { signedIn: 'signed-in' },
    )
    .get(
      '/orgs/:org/visible',
      (context) => ({
        scope: context.scope.org.name,
        // @ts-expect-error an org route open to anonymous callers has no `me`
        me: context.me ?? null,
      }),
      { orgVisible: true },
    )
    .get('/orgs/:org/member', ({ me, scope }) => ({ me: me.user.name, scope: scope.org.name }), { inOrg: 'org-member' })
    .get(
      '/users/:username/own',
      (context) => ({
        me: context.me.user.name,
        target: context.target.name,
        // @ts-expect-error a user route has no `scope`
        scope: context.scope ?? null,
      }),
      { ofUser: 'self-or-admin' },
    )
    .get(
      '/clusters/:owner/:cluster',
      (context) => ({
        me: context.me.user.name,
        cluster: `${context.cluster.owner.name}/${context.cluster.cluster.name} ${context.cluster.access}`,
        // @ts-expect-error a cluster route has no org `scope`
        scope: context.scope ?? null,
      }),
      { inCluster: 'read' },
    )

describe('guard kinds', () => {
  const world = async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    const app = probes(t.deps)
    const get = async (path: string, token?: string) => {
      const res = await app.handle(testRequest('http://localhost', 'GET', path, { token }))
      return { status: res.status, body: res.status === 200 ? await res.json() : undefined }
    }
    await deadRegistrationFixture(t, alice.user, 'dev')
    return { alice, get }
  }

  test('a public route gets the optional actor and no me, even for a signed-in caller', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/public', alice.token)).toEqual({ status: 200, body: { actor: 'alice', me: null } })
    expect(await get('/probe/public')).toEqual({ status: 200, body: { actor: null, me: null } })
  })

  test('a signed-in route gets me and no scope', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/signed-in', alice.token)).toEqual({ status: 200, body: { me: 'alice', scope: null } })
  })

  test('an org-visible route gets scope and no me, anonymous callers included', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/orgs/acme/visible', alice.token)).toEqual({ status: 200, body: { scope: 'acme', me: null } })
    expect(await get('/probe/orgs/acme/visible')).toEqual({ status: 200, body: { scope: 'acme', me: null } })
  })

  test('an org route gets me and scope', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/orgs/acme/member', alice.token)).toEqual({ status: 200, body: { me: 'alice', scope: 'acme' } })
  })

  test('a self-or-admin route gets me and the target user, and no scope', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/users/ALICE/own', alice.token)).toEqual({ status: 200, body: { me: 'alice', target: 'alice', scope: null } })
  })

  test('a cluster route gets me and the cluster with the access the caller holds, and no scope', async () => {
    const { alice, get } = await world()
    expect(await get('/probe/clusters/Alice/DEV', alice.token)).toEqual({
      status: 200,
      body: { me: 'alice', cluster: 'alice/dev manage', scope: null },
    })
  })

  test('a route declaring two kinds is refused when the app is built, whichever comes first', async () => {
    const t = await makeTestApp()
    const build = (hook: Record<string, unknown>) => () => new Elysia().use(guard(t.deps)).get('/twice', () => 'never', hook)
    expect(build({ public: true, signedIn: 'signed-in' })).toThrow('a route declares one of')
    expect(build({ inOrg: 'org-member', ofUser: 'self-or-admin' })).toThrow('a route declares one of')
    expect(build({ signedIn: 'signed-in' })).not.toThrow()
    // The cluster kind checks the token scope by its verb: a method-based scope beside it would contradict it.
    expect(build({ inCluster: 'read', scope: 'cluster' })).toThrow('has the cluster scope already')
    expect(build({ scope: 'cluster', inCluster: 'read' })).toThrow('has the cluster scope already')
  })
})
