import { describe, expect, test } from 'bun:test'
import { join, resolve } from 'node:path'
import { Messages } from '../../src/identity/service'
import { Messages as SignInMessages } from '../../src/identity/signin/service'
import { makeTestApp, PASSWORD, tempDir } from '../support/app'
import { makeHttpTestApp } from './http'

const newUser = { username: 'dave', email: 'dave@example.com', password: 'password123' }

describe('POST /api/v1/admin/users', () => {
  test('site admin → 201; the new user signs in and owns the email address', async () => {
    const t = await makeHttpTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', newUser)
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({ login: 'dave', email: 'dave@example.com' })
    expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'dave', password: 'password123' } })).status).toBe(200)
    expect(
      (await t.request('POST', '/api/v1/user/signin', { body: { username: 'dave@example.com', password: 'password123' } })).status,
    ).toBe(200)
  })

  test('an email another user holds (even as a secondary address) → 422 and no user', async () => {
    const t = await makeHttpTestApp()
    const admin = await t.admin()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['dave@example.com'] })
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', newUser)
    expect(res.status).toBe(422)
    expect((await t.request('GET', '/api/v1/users/dave')).status).toBe(404)
  })

  test.each([
    [{ ...newUser, username: 'api' }],
    [{ ...newUser, username: 'x.keys' }],
    [{ ...newUser, password: 'short' }],
    [{ ...newUser, email: 'nope' }],
    [{ ...newUser, username: 'root' }],
  ])('invalid or taken input %p → 422', async (body) => {
    const t = await makeHttpTestApp()
    const admin = await t.admin()
    expect((await t.as(admin).send('POST', '/api/v1/admin/users', body)).status).toBe(422)
  })

  test('a plain user → 403; anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/admin/users', newUser)).status).toBe(403)
    expect((await t.request('POST', '/api/v1/admin/users', { body: newUser })).status).toBe(401)
  })
})

describe('PATCH /api/v1/admin/users/{username}', () => {
  test('site admin disables alice → her sign-in is refused with the prohibited message, her token and session stop; enabling restores them', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const [alice] = await t.users('alice')
    const signIn = () => t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })
    const session = (await signIn()).headers
      .getSetCookie()
      .find((c) => c.startsWith('platform_session='))!
      .split(';')[0]!
    const disabled = await t.as(admin).send('PATCH', '/api/v1/admin/users/alice', { prohibit_login: true })
    expect(disabled.status).toBe(200)
    expect(await disabled.json()).toMatchObject({ login: 'alice', prohibit_login: true })
    const refused = await signIn()
    expect(refused.status).toBe(405)
    expect(await refused.json()).toMatchObject({ message: SignInMessages.prohibited })
    expect((await t.as(alice!).get('/api/v1/user')).status).toBe(401)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: session } })).status).toBe(401)

    const enabled = await t.as(admin).send('PATCH', '/api/v1/admin/users/alice', { prohibit_login: false })
    expect(await enabled.json()).toMatchObject({ login: 'alice', prohibit_login: false })
    expect((await signIn()).status).toBe(200)
    expect((await t.as(alice!).get('/api/v1/user')).status).toBe(200)
  })

  test('a site admin disabling their own account → 409 with the message; they still work', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('PATCH', `/api/v1/admin/users/${admin.name}`, { prohibit_login: true })
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({ message: Messages.disableSelf })
    expect((await t.as(admin).get('/api/v1/user')).status).toBe(200)
  })

  test('an unknown user → 404; an organization → 404; a non-boolean prohibit_login → 422; nothing changes', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const [alice] = await t.users('alice')
    expect((await t.as(admin).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    expect((await t.as(admin).send('PATCH', '/api/v1/admin/users/nobody', { prohibit_login: true })).status).toBe(404)
    expect((await t.as(admin).send('PATCH', '/api/v1/admin/users/acme', { prohibit_login: true })).status).toBe(404)
    expect((await t.as(admin).send('PATCH', '/api/v1/admin/users/alice', { prohibit_login: 'yes' })).status).toBe(422)
    expect((await t.as(alice!).get('/api/v1/user')).status).toBe(200)
  })

  test('a plain user → 403 and alice stays enabled; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    expect((await t.as(bob!).send('PATCH', '/api/v1/admin/users/alice', { prohibit_login: true })).status).toBe(403)
    expect((await t.request('PATCH', '/api/v1/admin/users/alice', { body: { prohibit_login: true } })).status).toBe(401)
    expect((await t.as(alice!).get('/api/v1/user')).status).toBe(200)
  })
})

describe('admin create-user (command line)', () => {
  test('creates a user who can then sign in; a second run with the same name fails', async () => {
    const dataDir = tempDir()
    const run = (args: string[]) =>
      Bun.spawnSync(['bun', resolve(import.meta.dir, '../../src/main.ts'), 'admin', 'create-user', ...args], {
        env: {
          ...process.env,
          PLATFORM_DATA_DIR: dataDir,
          PLATFORM_SANDBOX_CLUSTER: 'false',
          PATH: `${resolve(import.meta.dir, '../../node_modules/.bin')}:${process.env.PATH}`,
        },
      })
    const first = run(['--username', 'erin', '--email', 'erin@example.com', '--password', 'password123'])
    expect(first.exitCode).toBe(0)
    expect(first.stdout.toString()).toContain('created user erin')
    expect(first.stdout.toString()).not.toContain('password123')
    expect(run(['--username', 'erin', '--email', 'other@example.com', '--password', 'password123']).exitCode).not.toBe(0)
    const t = await makeHttpTestApp({ PLATFORM_DATA_DIR: dataDir, DATABASE_URL: `file:${join(dataDir, 'platform.db')}` })
    expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'erin', password: 'password123' } })).status).toBe(200)
  })
})
