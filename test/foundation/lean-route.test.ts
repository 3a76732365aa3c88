import { expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { authorizeSignedIn } from '../../src/authz/authorize'
import { leanRoute } from '../../src/http/lean-route'
import { DOCS_PATH } from '../../src/http/openapi'
import { makeTestApp } from '../support/app'

// A lean route on its own small app: what it answers for the requests it takes, and that it leaves the rest.
async function lab() {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const app = new Elysia()
    .use(
      leanRoute(t.deps, {
        name: 'test.lean',
        match: (_request, path) => (path.startsWith('/lean/') ? { what: path.slice('/lean/'.length) } : undefined),
        route: () => '/lean/:what',
        admit: async (actor) => authorizeSignedIn(t.deps, actor, 'signed-in'),
        handle: async (me, { what }) => {
          if (what === 'boom') throw new TypeError('kaboom')
          return Response.json({ who: me.user.name, what })
        },
      }),
    )
    .get('/lean-not/here', () => 'the app answered')
  const ask = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://localhost${path}`, { headers }))
  return { t, alice: alice!, ask }
}

test('a request it takes: admitted as the guard admits, answered by the handler, with a request id and nosniff', async () => {
  const { alice, ask } = await lab()
  const res = await ask('/lean/thing', { authorization: `token ${alice.token}`, 'x-request-id': 'lean-1' })
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ who: 'alice', what: 'thing' })
  expect(res.headers.get('x-request-id')).toBe('lean-1')
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect((await ask('/lean/thing')).status).toBe(401)
})

test('a handler that fails unexpectedly: a bare 500 in the one error body, logged with the request id, the cause not shown', async () => {
  const { t, alice, ask } = await lab()
  const res = await ask('/lean/boom', { authorization: `token ${alice.token}`, 'x-request-id': 'lean-boom-1' })
  expect(res.status).toBe(500)
  expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8')
  const body = await res.text()
  expect(JSON.parse(body)).toEqual({ message: 'Internal Server Error', url: `${t.config.publicUrl}${DOCS_PATH}` })
  expect(body).not.toContain('kaboom')
  const logged = (await t.logFor('lean-boom-1')).find((line) => line.event === 'unexpected error')
  expect(logged).toMatchObject({ requestId: 'lean-boom-1', method: 'GET', path: '/lean/boom', error: 'TypeError: kaboom' })
})

test("a request it does not match goes on to the app's own routes", async () => {
  const { ask } = await lab()
  const res = await ask('/lean-not/here')
  expect(await res.text()).toBe('the app answered')
})
