import { describe, expect, test } from 'bun:test'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'
import { billingWorld, event, hourly, requests, send } from './support'

const spec = { uid: 'o1', cluster: { uid: 'c1', name: 'one' } }
const good = (hour: number) => event(spec, Date.UTC(2025, 9, 1, hour), hour === 0 ? 'created' : 'heartbeat', requests('1', '1Gi'))

describe('POST /api/v1/usage/events', () => {
  test('bad events among good ones → 200; each bad one rejected alone with its 0-based index and a message naming the field', async () => {
    const w = await billingWorld()
    const body = [
      good(0),
      { ...good(1), time: 'yesterday' },
      { ...good(2), product: 'nope' },
      { ...good(3), resources: { requests: { cpu: 'lots', memory: '1Gi' } } },
      { ...good(4), resources: undefined },
      { ...good(5), type: 'exploded' },
      { ...good(6), object: { group: 'g', kind: 'K', name: 'n' } },
      'not an object',
      { ...good(8), time: new Date(Date.now() + 25 * 3_600_000).toISOString() },
      good(9),
    ]
    const { status, body: answer } = await send(w, body)
    expect(status).toBe(200)
    expect(answer.accepted).toBe(2)
    expect(answer.rejected.map((r) => r.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const messages = answer.rejected.map((r) => r.message)
    expect(messages[0]).toContain('time')
    expect(messages[1]).toContain('product')
    expect(messages[2]).toContain('resources.requests.cpu')
    expect(messages[3]).toContain('resources')
    expect(messages[4]).toContain('type')
    expect(messages[5]).toContain('object.uid')
    expect(messages[7]).toContain('future')
  })

  test('limits stand in for absent requests; a deleted event needs no resources', async () => {
    const w = await billingWorld()
    const { body } = await send(w, [
      event(spec, Date.UTC(2025, 9, 1), 'created', { limits: { cpu: '500m', memory: '512Mi' } }),
      event(spec, Date.UTC(2025, 9, 1, 0, 30), 'deleted'),
    ])
    expect(body).toEqual({ accepted: 2, duplicates: 0, rejected: [], rejectedCount: 0 })
    const res = await w.t.as(w.admin).get('/api/v1/dashboard/monthly-summary/dbprod?org=acme&period_start=2025-10&period_end=2025-10')
    // 30 minutes of half a core.
    expect((await res.json()).months[0]).toMatchObject({ instances: 1, cpuCoreMonth: 0 })
  })

  test('NDJSON with a line that is not JSON → that line rejected alone by its index among non-empty lines', async () => {
    const w = await billingWorld()
    const text = `${JSON.stringify(good(0))}\n\n{"time": nope\n${JSON.stringify(good(1))}\n`
    const res = await w.t.as(w.owner).send('POST', '/api/v1/usage/events?org=acme', text, { 'content-type': 'application/x-ndjson' })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      accepted: 2,
      duplicates: 0,
      rejected: [{ index: 1, message: 'the line is not valid JSON' }],
      rejectedCount: 1,
    })
  })

  for (const [name, body, contentType] of [
    ['a JSON object', '{"time": "x"}', 'application/json'],
    ['malformed JSON', '[{"time": ', 'application/json'],
    ['NDJSON without one JSON line', 'garbage\nmore garbage', 'application/x-ndjson'],
  ] as const)
    test(`${name} as the body → 422 with a message, nothing stored`, async () => {
      const w = await billingWorld()
      const res = await w.t.as(w.owner).send('POST', '/api/v1/usage/events?org=acme', body, { 'content-type': contentType })
      expect(res.status).toBe(422)
      expect((await res.json()).message).toBeString()
    })

  test('a body over 10 MiB → 413', async () => {
    const w = await billingWorld()
    const line = `${JSON.stringify(good(0))}\n`
    const big = line.repeat(Math.ceil((10.5 * 1024 * 1024) / line.length))
    const res = await w.t.as(w.owner).send('POST', '/api/v1/usage/events?org=acme', big, { 'content-type': 'application/x-ndjson' })
    expect(res.status).toBe(413)
  })

  test('an object keeps its product: an event naming another product for it is rejected alone', async () => {
    const w = await billingWorld()
    const { body } = await send(w, [good(0), { ...good(1), product: 'backupprod' }])
    expect(body.accepted).toBe(1)
    expect(body.rejected).toEqual([{ index: 1, message: expect.stringContaining('keeps its product') }])
  })

  test('who may send: owner and admin of the org and site admins yes; a plain member 403; an outsider 403; a private org hidden 404; anonymous 401', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'billing' })
    const [olga, adam, mia, out] = await t.users('olga', 'adam', 'mia', 'out')
    await makeOrg(t, 'acme', { owner: olga!, admins: [adam!], members: [mia!] })
    await makeOrg(t, 'secret', { owner: olga!, visibility: 'private' })
    const post = (who: typeof olga, org = 'acme') => t.as(who!).send('POST', `/api/v1/usage/events?org=${org}`, [good(0)])
    expect((await post(olga)).status).toBe(200)
    expect((await post(adam)).status).toBe(200)
    expect((await post(await t.admin())).status).toBe(200)
    expect((await post(mia)).status).toBe(403)
    expect((await post(out)).status).toBe(403)
    expect((await post(out, 'secret')).status).toBe(404)
    expect((await t.request('POST', '/api/v1/usage/events?org=acme', { body: [good(0)] })).status).toBe(401)
  })

  test('without billing mode every usage route → 404, while /api/v1/version answers', async () => {
    const t = await makeTestApp()
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga! })
    const admin = await t.admin()
    expect((await t.as(olga!).send('POST', '/api/v1/usage/events?org=acme', [good(0)])).status).toBe(404)
    for (const path of [
      '/api/v1/dashboard/monthly-summary/dbprod?org=acme',
      '/api/v1/dashboard/summary/generated-months?org=acme',
      '/api/v1/dbaas/billing/reports/namespaces',
    ])
      expect((await t.as(admin).get(path)).status).toBe(404)
    expect((await t.as(admin).get('/api/v1/version')).status).toBe(200)
  })
})

describe('isolation between orgs', () => {
  test("the same object uid sent to two orgs → two objects; each org's summary shows only its own usage", async () => {
    const w = await billingWorld()
    const [bob] = await w.t.users('bob')
    await makeOrg(w.t, 'globex', { owner: bob! })
    await send(w, hourly(spec, Date.UTC(2025, 9, 1), Date.UTC(2025, 9, 11), requests('2', '2Gi')))
    await send(w, hourly(spec, Date.UTC(2025, 9, 1), Date.UTC(2025, 9, 2), requests('100', '100Gi')), { org: 'globex', as: bob })
    const read = async (org: string) =>
      (
        await (
          await w.t.as(w.admin).get(`/api/v1/dashboard/monthly-summary/dbprod?org=${org}&period_start=2025-10&period_end=2025-10`)
        ).json()
      ).months[0]
    // acme: 10 days × 2 cores = 28,800 core-minutes; globex: 1 day × 100 cores = 144,000.
    expect((await read('acme')).cpuCoreMonth).toBe(0.66)
    expect((await read('globex')).cpuCoreMonth).toBe(3.29)
  })

  test('an owner of one org cannot send events to another org → 403', async () => {
    const w = await billingWorld()
    const [bob] = await w.t.users('bob')
    await makeOrg(w.t, 'globex', { owner: bob! })
    expect((await send(w, [good(0)], { org: 'globex' })).status).toBe(403)
  })
})
