import { expect, test } from 'bun:test'
import { Elysia, t as schema } from 'elysia'
import { auditRecorder, type RouteInfo } from '../../src/audit/recorder'
import { AppError } from '../../src/errors'
import { errorHandler } from '../../src/http/errors'
import { guard } from '../../src/http/guard'
import { requestLog } from '../../src/http/request-log'
import { findUserByName, insertUser } from '../../src/identity/store'
import { makeTestApp } from '../support/app'

/**
 * The recorder on a small app of its own, whose routes write a user row and then do what the test
 * asks: wait for the test (so the event can be looked for before the answer), fail, or write again.
 */
async function lab() {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const held = Promise.withResolvers<void>()
  const waiting = Promise.withResolvers<void>()
  const addUser = (name: string) =>
    t.deps.db.write((tx) => insertUser(tx, { name, lowerName: name, email: `${name}@example.com`, passwordHash: '' }))
  const routes: { list?: readonly RouteInfo[] } = {}
  const app = new Elysia()
    .use(errorHandler('http://localhost/docs', () => undefined))
    .use(requestLog(t.deps.log, false))
    .use(auditRecorder(t.deps, { routes: () => routes.list ?? [], recordedReads: [] }))
    .use(guard(t.deps))
    .post(
      '/things/:name',
      async ({ params, query, status }) => {
        await addUser(params.name)
        if (query.next === 'wait') {
          waiting.resolve()
          await held.promise
        }
        if (query.next === 'refuse') throw new AppError('forbidden', 'changed, then refused')
        if (query.next === 'write-again') await addUser(`${params.name}-2`)
        return status(201, { made: params.name })
      },
      {
        signedIn: 'signed-in',
        params: schema.Object({ name: schema.String() }),
        query: schema.Object({ next: schema.Optional(schema.String()) }),
        response: { 201: schema.Object({ made: schema.String() }) },
      },
    )
    .post(
      '/rolled-back/:name',
      async ({ params }) => {
        await t.deps.db.write(async (tx) => {
          await insertUser(tx, { name: params.name, lowerName: params.name, email: `${params.name}@example.com`, passwordHash: '' })
          throw new AppError('conflict', 'rolled back')
        })
      },
      { signedIn: 'signed-in', params: schema.Object({ name: schema.String() }) },
    )
  routes.list = app.routes
  const post = (path: string, id: string) =>
    app.handle(
      new Request(`http://localhost${path}`, { method: 'POST', headers: { authorization: `token ${alice!.token}`, 'x-request-id': id } }),
    )
  const events = async (requestId: string) =>
    (await t.deps.db.read.query.auditEvents.findMany()).filter((e) => e.requestId === requestId).map((e) => [e.status, e.result])
  return { t, post, events, waiting: waiting.promise, release: () => held.resolve() }
}

test('a change and its event commit together: the event is there before the answer, stamped with the success status', async () => {
  const { t, post, events, waiting, release } = await lab()
  const answer = post('/things/held?next=wait', 'held-1')
  await waiting
  expect(await findUserByName(t.deps.db.read, 'held')).toBeDefined()
  expect(await events('held-1')).toEqual([[201, 'allowed']])
  release()
  expect((await answer).status).toBe(201)
  expect(await events('held-1')).toEqual([[201, 'allowed']])
})

test('a change rolled back takes its event with it; the refusal is written after the fact', async () => {
  const { t, post, events } = await lab()
  expect((await post('/rolled-back/ghost', 'ghost-1')).status).toBe(409)
  expect(await findUserByName(t.deps.db.read, 'ghost')).toBeUndefined()
  expect(await events('ghost-1')).toEqual([[409, 'refused']])
})

test('a request that changed something and then ended otherwise has its one event corrected to how it ended', async () => {
  const { post, events } = await lab()
  expect((await post('/things/half?next=refuse', 'half-1')).status).toBe(403)
  expect(await events('half-1')).toEqual([[403, 'refused']])
})

test('a request that writes twice records one event', async () => {
  const { t, post, events } = await lab()
  expect((await post('/things/twice?next=write-again', 'twice-1')).status).toBe(201)
  expect(await findUserByName(t.deps.db.read, 'twice-2')).toBeDefined()
  expect(await events('twice-1')).toEqual([[201, 'allowed']])
})
