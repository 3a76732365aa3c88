import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Subscription } from '@nats-io/transport-node'
import type { AuditEvent } from '../../src/audit/schemas'
import { type Credentials, connected, lab } from '../msgbus/support'
import { makeOrg } from '../orgs/support'
import type { TestApp, TestUser } from '../support/app'
import { eventually } from '../support/wait'

// A real nats-server process: room for a loaded machine.
setDefaultTimeout(30000)

/** An org owned by `owner` with its system admin, and org-wide message-bus credentials of it. */
async function orgWithCredentials(t: TestApp, owner: TestUser, name: string): Promise<Credentials> {
  await makeOrg(t, name, { owner })
  expect((await t.as(await t.admin()).send('POST', `/api/v1/orgs/${name}/system-admin`)).status).toBe(201)
  const res = await t.as(owner).send('POST', `/api/v1/orgs/${name}/tokens/msgbus-tokens/`)
  expect(res.status).toBe(200)
  return (await res.json()) as Credentials
}

/** Every message `subscription` gets from now on, as events, in order. */
function collected(subscription: Subscription): AuditEvent[] {
  const events: AuditEvent[] = []
  void (async () => {
    for await (const message of subscription) events.push(message.json() as AuditEvent)
  })()
  return events
}

describe('audit.<org> on the message bus', () => {
  test("an org's events reach its account's audit.<org> as their JSON; another org's events never do", async () => {
    const { t } = await lab()
    const [olga, bert] = await t.users('olga', 'bert')
    const acme = await orgWithCredentials(t, olga!, 'acme')
    const beta = await orgWithCredentials(t, bert!, 'beta')
    const agent = await connected(acme)
    const inAcme = collected(agent.subscribe('audit.acme'))
    await agent.flush()
    const betaAgent = await connected(beta)
    const inBeta = collected(betaAgent.subscribe('audit.beta'))
    await betaAgent.flush()

    const created = await t
      .as(olga!)
      .send('POST', '/api/v1/orgs/acme/teams', { name: 'ops', permission: 'read' }, { 'x-request-id': 'team-1' })
    expect(created.status).toBe(201)
    expect((await t.as(bert!).send('POST', '/api/v1/orgs/beta/teams', { name: 'ops', permission: 'read' })).status).toBe(201)
    const refused = await t
      .as(bert!)
      .send('POST', '/api/v1/orgs/acme/teams', { name: 'x', permission: 'read' }, { 'x-request-id': 'refused-1' })
    expect(refused.status).toBe(403)

    await eventually(() => inAcme.length >= 2 && inBeta.length >= 1, 10_000)
    expect(inAcme[0]).toMatchObject({
      requestId: 'team-1',
      kind: 'api',
      org: 'acme',
      actor: { login: 'olga' },
      route: '/api/v1/orgs/{org}/teams',
      outcome: { status: 201, result: 'allowed' },
    })
    const stored = (await (await t.as(olga!).get('/api/v1/orgs/acme/audit?limit=50')).json()) as AuditEvent[]
    expect(stored.find((e) => e.requestId === 'team-1')).toEqual(inAcme[0]!)
    expect(inAcme[1]).toMatchObject({ requestId: 'refused-1', actor: { login: 'bert' }, outcome: { result: 'refused' } })
    expect(inBeta[0]).toMatchObject({ org: 'beta', actor: { login: 'bert' } })
    // Acme's credentials may follow audit.acme only, and nothing of beta's was published in acme's account.
    expect(inAcme.every((e) => e.org === 'acme')).toBe(true)
  })
})
