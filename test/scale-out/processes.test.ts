import { afterAll, describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { startEmulator } from '../../src/kube-emulator'
import { importBody } from '../clusters/support'
import { basic, tempDir } from '../support/app'
import { closesWithin, connectRefusal, connectWithCredentials, natsServer } from '../support/nats'
import { freePort } from '../support/ports'
import { createTokenOnCommandLine, startServer } from '../support/process'

/**
 * Two real `serve` processes on one data dir, as `serve --workers 2` or two machines on one
 * database run them: what one process changes, the other honours within a second (its caches
 * follow commits), and state one process starts the other can finish.
 */

const dataDir = tempDir()
// The message bus both processes push account updates to (its afterAll stops it).
const nats = natsServer(dataDir, tempDir('nats-'), { port: freePort() })
await nats.start()
const env = { PLATFORM_ADMIN_PASSWORD: 'admin-password-1', PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true', MSGBUS_URLS: nats.url }
const a = await startServer(dataDir, env)
const b = await startServer(dataDir, env)
const member = await startEmulator({ tls: true, seed: true })
afterAll(async () => {
  for (const server of [a, b]) server.child.kill('SIGTERM')
  await Promise.all([a.child.exited, b.child.exited, member.stop()])
})
const adminToken = createTokenOnCommandLine(dataDir, 'admin')

type Credential = { token: string } | { basic: [string, string] } | { cookie: string }
const headersOf = (who: Credential): Record<string, string> =>
  'token' in who
    ? { authorization: `token ${who.token}` }
    : 'basic' in who
      ? { authorization: basic(...who.basic) }
      : { cookie: who.cookie }

function call(server: { base: string }, who: Credential, method: string, path: string, body?: unknown) {
  return fetch(`${server.base}${path}`, {
    method,
    headers: { ...headersOf(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

const PASSWORD = 'a long password'
let users = 0
/** A new user (made on process A) with a token; names differ per test. */
async function newUser(prefix: string): Promise<{ name: string; token: string; id: number }> {
  const name = `${prefix}${++users}`
  const created = await call(a, { token: adminToken }, 'POST', '/api/v1/admin/users', {
    username: name,
    email: `${name}@example.com`,
    password: PASSWORD,
    must_change_password: false,
  })
  expect(created.status).toBe(201)
  const token = await (
    await call(a, { basic: [name, PASSWORD] }, 'POST', `/api/v1/users/${name}/tokens`, { name: 't', scopes: ['all'] })
  ).json()
  return { name, token: token.sha1, id: token.id }
}

/**
 * Asks `server` until it answers `expected`: a stale answer is allowed only to a request sent
 * within a second of the change (a loaded machine may answer later, never staler).
 */
async function honouredWithinASecond(changedAt: number, ask: () => Promise<Response>, expected: number): Promise<void> {
  for (;;) {
    const sentAt = performance.now()
    const status = (await ask()).status
    if (status === expected) return
    expect(sentAt - changedAt).toBeLessThan(1000)
  }
}

describe('what one process changes, the other honours within a second', () => {
  test('a token deleted on A → refused on B', async () => {
    const bob = await newUser('bob')
    expect((await call(b, bob, 'GET', '/api/v1/user')).status).toBe(200)
    expect((await call(a, { basic: [bob.name, PASSWORD] }, 'DELETE', `/api/v1/users/${bob.name}/tokens/${bob.id}`)).status).toBe(204)
    await honouredWithinASecond(performance.now(), () => call(b, bob, 'GET', '/api/v1/user'), 401)
  })

  test('a password changed on A → the sessions on B end', async () => {
    const bob = await newUser('bob')
    const signIn = await call(b, { cookie: '' }, 'POST', '/api/v1/user/signin', { username: bob.name, password: PASSWORD })
    expect(signIn.status).toBe(200)
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    expect((await call(b, { cookie }, 'GET', '/api/v1/user')).status).toBe(200)
    const changed = await call(a, bob, 'POST', '/api/v1/user/settings/account/password', {
      old_password: PASSWORD,
      password: 'another long password',
      retype: 'another long password',
    })
    expect(changed.status).toBe(200)
    await honouredWithinASecond(performance.now(), () => call(b, { cookie }, 'GET', '/api/v1/user'), 401)
  })

  test('an org deleted on A → gone on B', async () => {
    const bob = await newUser('bob')
    expect((await call(a, bob, 'POST', '/api/v1/orgs', { username: `${bob.name}-org` })).status).toBe(201)
    expect((await call(b, bob, 'GET', `/api/v1/orgs/${bob.name}-org`)).status).toBe(200)
    expect((await call(a, bob, 'DELETE', `/api/v1/orgs/${bob.name}-org`)).status).toBe(204)
    await honouredWithinASecond(performance.now(), () => call(b, bob, 'GET', `/api/v1/orgs/${bob.name}-org`), 404)
  })

  test("a team's cluster grant removed on A → B's proxy refuses the team member", async () => {
    const [owner, carol] = [await newUser('owner'), await newUser('carol')]
    const org = `${owner.name}-org`
    expect((await call(a, owner, 'POST', '/api/v1/orgs', { username: org })).status).toBe(201)
    const team = await (await call(a, owner, 'POST', `/api/v1/orgs/${org}/teams`, { name: 'readers', permission: 'read' })).json()
    expect((await call(a, owner, 'PUT', `/api/v1/teams/${team.id}/members/${carol.name}`)).status).toBe(204)
    const imported = await call(a, owner, 'POST', `/api/v1/clustersv2/${org}/import`, importBody(member, 'prod'))
    expect(imported.status).toBe(201)
    expect((await call(a, owner, 'PUT', `/api/v1/teams/${team.id}/clusters/prod`)).status).toBe(204)
    const viaProxy = () => call(b, carol, 'GET', `/api/v1/clusters/${org}/prod/k8s/api/v1/namespaces`)
    expect((await viaProxy()).status).toBe(200)
    expect((await call(a, owner, 'DELETE', `/api/v1/teams/${team.id}/clusters/prod`)).status).toBe(204)
    await honouredWithinASecond(performance.now(), viaProxy, 404)
  })

  test('message-bus credentials issued on A, revoked on B → the live connection drops within a second, reconnects refused', async () => {
    const bob = await newUser('bob')
    const issued = await call(a, bob, 'GET', '/api/v1/user/msgbus/credentials')
    expect(issued.status).toBe(200)
    const { credentials } = (await issued.json()) as { credentials: string }
    const live = await connectWithCredentials(nats.url, credentials)
    try {
      const [key] = await (await call(b, bob, 'GET', '/api/v1/user/settings/tokens/msgbus-tokens/')).json()
      const since = performance.now()
      expect((await call(b, bob, 'POST', `/api/v1/user/settings/tokens/msgbus-tokens/${key.id}/revoke/`)).status).toBe(200)
      expect(await closesWithin(live, 1000, since)).toBeLessThan(1000)
      expect(await connectRefusal(nats.url, credentials)).toMatch(/Authorization Violation/)
    } finally {
      if (!live.isClosed()) await live.close()
    }
  })
})

describe('state one process starts, the other continues', () => {
  test('3 wrong passwords on A and 2 on B → the right password is 429 on both', async () => {
    const bob = await newUser('bob')
    for (const server of [a, a, a, b, b])
      expect((await call(server, { basic: [bob.name, 'wrong'] }, 'GET', '/api/v1/user')).status).toBe(401)
    for (const server of [a, b]) expect((await call(server, { basic: [bob.name, PASSWORD] }, 'GET', '/api/v1/user')).status).toBe(429)
  })

  test('the password step of a TOTP sign-in on A, the code on B → signed in', async () => {
    const bob = await newUser('bob')
    const security = '/api/v1/user/settings/security'
    const { secret } = await (await call(a, bob, 'GET', `${security}/twofa/enroll`)).json()
    expect((await call(a, bob, 'POST', `${security}/twofa/enroll`, { passcode: await generate({ secret }) })).status).toBe(200)
    const step1 = await call(a, { cookie: '' }, 'POST', '/api/v1/user/signin', { username: bob.name, password: PASSWORD })
    expect(step1.status).toBe(405)
    const ticket = step1.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith('platform_signin_ticket='))!
    const passcode = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 })
    const step2 = await call(b, { cookie: ticket }, 'POST', '/api/v1/user/signin/two-factor', { passcode })
    expect(step2.status).toBe(200)
  })
})
