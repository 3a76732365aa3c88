import { describe, expect, test } from 'bun:test'
import { basic, PASSWORD } from '../support/app'
import { makeHttpTestApp } from './http'

const SECRET_PASSWORD = 'Sup3r-Secret-Pa55phrase'

describe('no secret leaks', () => {
  test('a failed sign-in: the password is in no response and no log line', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const bodies: string[] = []
    for (const body of [
      { username: 'alice', password: SECRET_PASSWORD },
      { username: 'nobody', password: SECRET_PASSWORD },
      { username: 42, password: SECRET_PASSWORD },
      { username: 'alice', password: `${SECRET_PASSWORD}${'x'.repeat(1100)}` },
    ]) {
      const res = await t.request('POST', '/api/v1/user/signin', { body, headers: { 'x-request-id': 'leak-check' } })
      expect(res.status).toBeGreaterThanOrEqual(400)
      bodies.push(await res.text())
    }
    await t.logFor('leak-check')
    expect(bodies.join('\n')).not.toContain(SECRET_PASSWORD)
    expect(t.logs.join('\n')).not.toContain(SECRET_PASSWORD)
  })

  test('a wrong Basic password is in no response or log line', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const res = await t.request('GET', '/api/v1/user', {
      headers: { authorization: basic('alice', SECRET_PASSWORD), 'x-request-id': 'basic-leak' },
    })
    expect(res.status).toBe(401)
    expect(await res.text()).not.toContain(SECRET_PASSWORD)
    await t.logFor('basic-leak')
    expect(t.logs.join('\n')).not.toContain(SECRET_PASSWORD)
  })

  test('a created token appears once in its creation response, then in no list and no log line', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const created = await (await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'once' })).json()
    const viaBasic = await (
      await t.request('POST', '/api/v1/users/alice/tokens', {
        headers: { authorization: basic('alice', PASSWORD) },
        body: { name: 'twice' },
      })
    ).json()
    await t.request('GET', `/api/v1/user?token=${created.token}`, { headers: { 'x-request-id': 'query-token' } })
    const later = [
      await (await t.as(alice).get('/api/v1/user/settings/tokens/access-tokens/')).text(),
      await (await t.request('GET', '/api/v1/users/alice/tokens', { headers: { authorization: basic('alice', PASSWORD) } })).text(),
    ].join('\n')
    await t.logFor('query-token')
    for (const secret of [created.token, viaBasic.sha1]) {
      expect(later).not.toContain(secret)
      expect(t.logs.join('\n')).not.toContain(secret)
    }
  })

  test('the password given to account deletion is redacted from the request log', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t
      .as(alice)
      .send('POST', `/api/v1/user/settings/account/delete?password=${SECRET_PASSWORD}`, undefined, { 'x-request-id': 'delete-leak' })
    await t.logFor('delete-leak')
    expect(t.logs.join('\n')).not.toContain(SECRET_PASSWORD)
  })

  test('a password change with a wrong old password echoes neither password', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/account/password', {
      old_password: SECRET_PASSWORD,
      password: `${SECRET_PASSWORD}2`,
      retype: 'x',
    })
    expect(await res.text()).not.toContain(SECRET_PASSWORD)
  })
})

describe('the OpenAPI document', () => {
  test('lists every identity route', async () => {
    const t = await makeHttpTestApp()
    const doc = (await (await t.request('GET', '/api/v1/swagger.json')).json()) as { paths: Record<string, Record<string, unknown>> }
    const expected: [string, string][] = [
      ['get', '/api/v1/users/search'],
      ['get', '/api/v1/users/{username}'],
      ['get', '/api/v1/users/{username}/tokens'],
      ['post', '/api/v1/users/{username}/tokens'],
      ['delete', '/api/v1/users/{username}/tokens/{token}'],
      ['get', '/api/v1/users/{username}/followers'],
      ['get', '/api/v1/users/{username}/following'],
      ['get', '/api/v1/users/{username}/following/{target}'],
      ['post', '/api/v1/user/signin'],
      ['get', '/api/v1/user/signout'],
      ['get', '/api/v1/user'],
      ['get', '/api/v1/user/login-method'],
      ['get', '/api/v1/user/emails'],
      ['post', '/api/v1/user/emails'],
      ['delete', '/api/v1/user/emails'],
      ['get', '/api/v1/user/settings/account/email'],
      ['post', '/api/v1/user/settings/account/email'],
      ['post', '/api/v1/user/settings/account/email/delete'],
      ['get', '/api/v1/user/followers'],
      ['get', '/api/v1/user/following'],
      ['get', '/api/v1/user/following/{username}'],
      ['put', '/api/v1/user/following/{username}'],
      ['delete', '/api/v1/user/following/{username}'],
      ['post', '/api/v1/user/validate/username'],
      ['post', '/api/v1/user/validate/orgname'],
      ['post', '/api/v1/user/validate/email'],
      ['get', '/api/v1/user/settings/profile'],
      ['post', '/api/v1/user/settings/profile'],
      ['get', '/api/v1/user/settings/avatar'],
      ['post', '/api/v1/user/settings/avatar'],
      ['post', '/api/v1/user/settings/avatar/delete'],
      ['post', '/api/v1/user/settings/account/password'],
      ['post', '/api/v1/user/settings/account/delete'],
      ['get', '/api/v1/user/settings/pagination'],
      ['post', '/api/v1/user/settings/pagination'],
      ['get', '/api/v1/user/settings/tokens/access-tokens/'],
      ['post', '/api/v1/user/settings/tokens/access-tokens/'],
      ['post', '/api/v1/user/settings/tokens/access-tokens/delete-records'],
      ['delete', '/api/v1/user/settings/tokens/access-tokens/{id}'],
      ['post', '/api/v1/admin/users'],
      ['get', '/avatars/{name}'],
    ]
    const missing = expected.filter(([method, path]) => !doc.paths[path]?.[method]).map(([m, p]) => `${m} ${p}`)
    expect(missing).toEqual([])
  })
})
