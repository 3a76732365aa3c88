import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { connect, credsAuthenticator, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { accountKeys, orgAccount } from '../../src/msgbus/accounts'
import { credsFile, newKeyPair, userJwt } from '../../src/msgbus/claims'
import { ensureOrgSubscribers } from '../../src/msgbus/org-subscribers'
import { SubscriberMessages } from '../../src/usage/subscriber'
import { type Credentials, connected, credentialsOf, lab } from '../msgbus/support'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { firstServerError, wipeResolverDir } from '../support/nats'
import { startServer } from '../support/process'
import { eventually } from '../support/wait'
import { coreMonths, expectedUsage, hourly, requests } from './support'

// Real nats-server processes, a restart and waits on the clock: room for a loaded machine.
setDefaultTimeout(30000)

const API = '/api/v1'
const spec = { uid: 'o1', cluster: { uid: 'c1', name: 'one' } }
const day = hourly(spec, Date.UTC(2025, 9, 1), Date.UTC(2025, 9, 2), requests('2', '4Gi'))
const good = (hour: number) => day[hour]!

interface Answer {
  accepted: number
  duplicates: number
  rejected: { index: number; message: string }[]
  rejectedCount: number
}

/** An org with its system admin, owned by `owner`, and fresh message-bus credentials of it. */
async function orgAgent(t: TestApp, owner: TestUser, name: string): Promise<{ id: number; creds: Credentials }> {
  const { org } = await makeOrg(t, name, { owner })
  expect((await t.as(await t.admin()).send('POST', `${API}/orgs/${name}/system-admin`)).status).toBe(201)
  const res = await t.as(owner).send('POST', `${API}/orgs/${name}/tokens/msgbus-tokens/`)
  expect(res.status).toBe(200)
  return { id: org.id, creds: (await res.json()) as Credentials }
}

/** A billing-mode app on a real nats-server, with org acme's agent connected. */
async function busWorld(env: Record<string, string> = {}) {
  const { t, nats } = await lab({ PLATFORM_MODES: 'billing', ...env })
  const [olga] = await t.users('olga')
  const acme = await orgAgent(t, olga!, 'acme')
  return { t, nats, olga: olga!, admin: await t.admin(), acme, agent: await connected(acme.creds) }
}

const json = (m: Msg) => m.json<Partial<Answer> & { error?: string }>()

function request(nc: NatsConnection, subject: string, payload: string | Uint8Array): Promise<Msg> {
  return nc.request(subject, payload, { timeout: 5000 })
}

async function generatedMonths(t: TestApp, admin: TestUser, org: string): Promise<unknown> {
  return (await t.as(admin).get(`${API}/dashboard/summary/generated-months?org=${org}`)).json()
}

async function october(t: TestApp, admin: TestUser, org: string): Promise<{ instances: number; cpuCoreMonth: number } | undefined> {
  const res = await t.as(admin).get(`${API}/dashboard/monthly-summary/dbprod?org=${org}&period_start=2025-10&period_end=2025-10`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { months: { instances: number; cpuCoreMonth: number }[] }).months[0]
}

/** The error a request ends with (no responders, timeout), or undefined when it was answered. */
async function requestFailure(nc: NatsConnection, subject: string, payload: string): Promise<string | undefined> {
  try {
    await nc.request(subject, payload, { timeout: 1000 })
    return undefined
  } catch (error) {
    return error instanceof Error ? `${error.name} ${error.message} ${String((error as { cause?: unknown }).cause ?? '')}` : String(error)
  }
}

describe('usage.events.<org> on the message bus', () => {
  test('an org agent requests a day of events → the reply counts them; monthly summary and generated months show them at once', async () => {
    const { t, admin, agent } = await busWorld()
    const reply = await request(agent, 'usage.events.acme', JSON.stringify(day))
    expect(json(reply)).toEqual({ accepted: 24, duplicates: 0, rejected: [], rejectedCount: 0 })
    expect(await generatedMonths(t, admin, 'acme')).toEqual({ yearMonthList: { 2025: ['October'] } })
    const expected = expectedUsage(day, 'dbprod').get('2025-10')!
    expect(await october(t, admin, 'acme')).toMatchObject({ instances: 1, cpuCoreMonth: coreMonths(expected.cpuMinutes) })
  })

  test('the same events again → counted as duplicates; one event object and NDJSON are taken too', async () => {
    const { agent } = await busWorld()
    expect(json(await request(agent, 'usage.events.acme', JSON.stringify(day.slice(0, 3))))).toMatchObject({ accepted: 3, duplicates: 0 })
    expect(json(await request(agent, 'usage.events.acme', JSON.stringify(day.slice(0, 3))))).toEqual({
      accepted: 0,
      duplicates: 3,
      rejected: [],
      rejectedCount: 0,
    })
    expect(json(await request(agent, 'usage.events.acme', JSON.stringify(good(3))))).toEqual({
      accepted: 1,
      duplicates: 0,
      rejected: [],
      rejectedCount: 0,
    })
    const ndjson = [good(3), good(4), good(5)].map((e) => JSON.stringify(e)).join('\n')
    expect(json(await request(agent, 'usage.events.acme', ndjson))).toEqual({ accepted: 2, duplicates: 1, rejected: [], rejectedCount: 0 })
  })

  test('a bad event among good ones → rejected alone with its index; the others are kept', async () => {
    const { t, admin, agent } = await busWorld()
    const answer = json(await request(agent, 'usage.events.acme', JSON.stringify([good(0), { ...good(1), product: 'nope' }, good(2)])))
    expect(answer.accepted).toBe(2)
    expect(answer.rejected).toEqual([{ index: 1, message: expect.stringContaining('product') }])
    const ndjson = `${JSON.stringify(good(3))}\n{"time": nope\n${JSON.stringify(good(4))}\n`
    expect(json(await request(agent, 'usage.events.acme', ndjson))).toEqual({
      accepted: 2,
      duplicates: 0,
      rejected: [{ index: 1, message: 'the line is not valid JSON' }],
      rejectedCount: 1,
    })
    expect(await october(t, admin, 'acme')).toMatchObject({ instances: 1 })
  })

  test('a message of 300,000 bad events and a good one → an answer listing the first 100 rejections and counting all', async () => {
    const { t, admin, agent } = await busWorld()
    const reply = await request(agent, 'usage.events.acme', `[${'{},'.repeat(300_000)}${JSON.stringify(good(0))}]`)
    expect(reply.data.byteLength).toBeLessThan(16 * 1024)
    const answer = json(reply)
    expect(answer).toMatchObject({ accepted: 1, rejectedCount: 300_000 })
    expect(answer.rejected?.map((r) => r.index)).toEqual([...Array(100).keys()])
    expect(await october(t, admin, 'acme')).toMatchObject({ instances: 1 })
  })

  test('an event at an impossible date (2025-02-30) → rejected alone, not counted as March', async () => {
    const { agent } = await busWorld()
    const answer = json(await request(agent, 'usage.events.acme', JSON.stringify([{ ...good(0), time: '2025-02-30T00:00:00Z' }, good(1)])))
    expect(answer).toMatchObject({
      accepted: 1,
      rejectedCount: 1,
      rejected: [{ index: 0, message: 'time is not a real calendar date-time' }],
    })
  })

  test('garbage, invalid UTF-8 and a bare number → {error} with the service-error headers; the subscriber still ingests after', async () => {
    const { t, agent } = await busWorld()
    for (const payload of ['this is not json', new Uint8Array([0xff, 0xfe, 0x7b]), '42', '', 'null']) {
      const reply = await request(agent, 'usage.events.acme', payload)
      expect(json(reply).error).toBeString()
      expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('422')
      expect(reply.headers?.get('Nats-Service-Error')).toBe(json(reply).error!)
    }
    expect(json(await request(agent, 'usage.events.acme', JSON.stringify([good(0)])))).toMatchObject({ accepted: 1 })
    expect(t.logs.join('\n')).not.toContain('this is not json')
  })

  test("a message over the route's body limit → {error} 413 naming the limit; nothing is stored", async () => {
    const { t, admin, agent } = await busWorld({ PLATFORM_MAX_BODY_BYTES: '2000' })
    const reply = await request(agent, 'usage.events.acme', JSON.stringify(day))
    expect(json(reply)).toEqual({ error: SubscriberMessages.tooLarge(2000) })
    expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('413')
    expect(await generatedMonths(t, admin, 'acme')).toEqual({ yearMonthList: {} })
  })

  test('a plain publish (no reply subject) is ingested and logged in one short line without the payload', async () => {
    const { t, admin, agent } = await busWorld()
    agent.publish('usage.events.acme', JSON.stringify(day))
    await agent.flush()
    const months = await eventually(async () => {
      const generated = await generatedMonths(t, admin, 'acme')
      return JSON.stringify(generated) !== '{"yearMonthList":{}}' && generated
    }, 5000)
    expect(months).toEqual({ yearMonthList: { 2025: ['October'] } })
    const lines = t.logs.filter((l) => l.includes('usage events from the message bus'))
    expect(lines.length).toBe(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ subject: 'usage.events.acme', request: false, accepted: 24, duplicates: 0, rejected: 0 })
    expect(lines[0]).not.toContain('one')
    expect(lines[0]).not.toContain('o1')
  })
})

describe('isolation', () => {
  test("org beta's agent cannot publish on usage.events.acme: the server refuses it, acme gets nothing", async () => {
    const { t, admin, olga } = await busWorld()
    const beta = await orgAgent(t, olga, 'beta')
    const betaAgent = await connected(beta.creds)
    const refused = firstServerError(betaAgent)
    betaAgent.publish('usage.events.acme', JSON.stringify(day))
    await betaAgent.flush()
    expect(await refused).toContain('Permissions Violation for Publish to "usage.events.acme"')
    expect(await generatedMonths(t, admin, 'acme')).toEqual({ yearMonthList: {} })
    // Its own subject works.
    expect(json(await request(betaAgent, 'usage.events.beta', JSON.stringify([good(0)])))).toMatchObject({ accepted: 1 })
  })

  test("a credential of beta's account allowed every subject, naming acme → refused by beta's subscriber; acme and beta get nothing", async () => {
    const { t, admin, olga } = await busWorld()
    const beta = await orgAgent(t, olga, 'beta')
    // As if beta's account held an over-broad credential: signed with its key, publish `>`.
    const keys = await accountKeys(t.deps, orgAccount(beta.id))
    const user = newKeyPair('user')
    const jwt = await userJwt(user, keys.signer, { name: 'wide', accountPublicKey: keys.publicKey, permissions: {} })
    const wide = await connect({
      servers: beta.creds.msgbusEndpoints,
      authenticator: credsAuthenticator(credsFile(jwt, user)),
      reconnect: false,
    })
    try {
      const reply = await request(wide, 'usage.events.acme', JSON.stringify(day))
      expect(json(reply)).toEqual({ error: SubscriberMessages.otherOrg('acme', 'beta') })
      expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('403')
      expect(await generatedMonths(t, admin, 'acme')).toEqual({ yearMonthList: {} })
      expect(await generatedMonths(t, admin, 'beta')).toEqual({ yearMonthList: {} })
    } finally {
      await wide.close()
    }
  })

  test('a personal credential cannot publish usage events for an org it belongs to', async () => {
    const { t, admin, olga } = await busWorld()
    const personal = await connected(await credentialsOf(t, olga))
    const refused = firstServerError(personal)
    personal.publish('usage.events.acme', JSON.stringify(day))
    await personal.flush()
    expect(await refused).toContain('Permissions Violation for Publish')
    expect(await generatedMonths(t, admin, 'acme')).toEqual({ yearMonthList: {} })
  })
})

describe('subscriber lifecycle', () => {
  test('an org created after the platform connected ingests with its first credentials', async () => {
    const { t, admin, olga } = await busWorld()
    const late = await orgAgent(t, olga, 'late')
    const agent = await connected(late.creds)
    expect(json(await request(agent, 'usage.events.late', JSON.stringify(day)))).toMatchObject({ accepted: 24 })
    expect(await generatedMonths(t, admin, 'late')).toEqual({ yearMonthList: { 2025: ['October'] } })
  })

  test('a deleted org: the next message is answered that the org is gone, later ones find no responder', async () => {
    const { t, olga, agent } = await busWorld()
    expect((await t.as(olga).delete(`${API}/orgs/acme`)).status).toBe(204)
    expect(json(await request(agent, 'usage.events.acme', JSON.stringify([good(0)])))).toEqual({ error: SubscriberMessages.orgGone })
    const failure = await eventually(() => requestFailure(agent, 'usage.events.acme', '[]'))
    expect(failure).toMatch(/no responders|503/i)
  })

  for (const [name, wipe] of [
    ['', false],
    [' that lost every pushed account', true],
  ] as const) {
    test(`after a nats-server restart${name} the subscriber reconnects and ingestion resumes`, async () => {
      const { nats, acme } = await busWorld()
      const agent = await connect({
        servers: acme.creds.msgbusEndpoints,
        authenticator: credsAuthenticator(Buffer.from(acme.creds.credentials, 'base64')),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 100,
        ignoreAuthErrorAbort: true,
      })
      try {
        expect(json(await request(agent, 'usage.events.acme', JSON.stringify([good(0)])))).toMatchObject({ accepted: 1 })
        await nats.stop()
        // Wiped: acme's account (made after the configuration was printed) is unknown until the platform pushes it again.
        if (wipe) wipeResolverDir(nats)
        await nats.start()
        // Short request timeouts: a request sent while the agent itself is still reconnecting is lost, not refused.
        const answer = await eventually(
          () => agent.request('usage.events.acme', JSON.stringify([good(1)]), { timeout: 1000 }).then(json, () => undefined),
          25_000,
        )
        // A lost reply may have followed an ingest: then the retry is a duplicate.
        expect(answer).toMatchObject({ rejected: [] })
        expect(answer!.accepted! + answer!.duplicates!).toBe(1)
      } finally {
        await agent.close()
      }
    })
  }

  test("two platform processes share an org's messages (queue group): each is ingested by one of them", async () => {
    const { t, nats, admin, agent } = await busWorld()
    const handledHere = () => t.logs.filter((l) => l.includes('"usage events from the message bus"')).length
    const other = await startServer(t.config.dataDir, { MSGBUS_URLS: nats.url, PLATFORM_MODES: 'billing' })
    try {
      let sent = 0
      const send = async () => {
        const e = { ...good(0), object: { ...good(0).object, uid: `q${sent}` } }
        sent++
        expect(json(await request(agent, 'usage.events.acme', JSON.stringify(e)))).toMatchObject({ accepted: 1 })
      }
      // Until the other process's subscriber has answered one (it subscribes once it has started and connected).
      await eventually(async () => {
        await send()
        return sent !== handledHere()
      }, 25_000)
      const before = { sent, here: handledHere() }
      for (let i = 0; i < 40; i++) await send()
      const here = handledHere() - before.here
      expect(here).toBeGreaterThan(0)
      expect(here).toBeLessThan(40)
      expect(await october(t, admin, 'acme')).toMatchObject({ instances: sent })
    } finally {
      other.child.kill()
      await other.child.exited
    }
  }, 60_000)

  test('outside billing mode nobody subscribes: a request finds no responder', async () => {
    const { t } = await lab()
    const [olga] = await t.users('olga')
    const agent = await connected((await orgAgent(t, olga!, 'acme')).creds)
    expect(await requestFailure(agent, 'usage.events.acme', JSON.stringify([good(0)]))).toMatch(/no responders|503/i)
  })

  test('without MSGBUS_URLS nothing starts: no subscriber is opened for an org account, nothing is logged', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'billing' })
    const [olga] = await t.users('olga')
    const { org } = await makeOrg(t, 'acme', { owner: olga! })
    await accountKeys(t.deps, orgAccount(org.id))
    await ensureOrgSubscribers(t.deps, orgAccount(org.id))
    expect(t.logs.filter((l) => l.includes('message bus'))).toEqual([])
  })
})
