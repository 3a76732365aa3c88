import { describe, expect, test } from 'bun:test'
import { makeTestApp, PASSWORD } from '../support/app'

/** Who asks is settled before what they sent: a bad credential or no credential wins over a bad body. */
describe('credential before body', () => {
  const badBodies = [
    ['malformed JSON', 'application/json', '{"emails": '],
    ['100k-deep JSON', 'application/json', '['.repeat(100_000)],
    ['text/plain', 'text/plain', '{"emails":["x@example.com"]}'],
  ] as const

  for (const [name, contentType, body] of badBodies) {
    test(`an invalid token sends ${name} → 401, not a body error`, async () => {
      const t = await makeTestApp()
      const res = await t.request('POST', '/api/v1/user/emails', {
        headers: { authorization: `token ${'0'.repeat(40)}`, 'content-type': contentType },
        body,
      })
      expect(res.status).toBe(401)
    })

    test(`an anonymous caller sends ${name} to a signed-in route → 401`, async () => {
      const t = await makeTestApp()
      const res = await t.request('POST', '/api/v1/user/emails', { headers: { 'content-type': contentType }, body })
      expect(res.status).toBe(401)
    })

    test(`a non-admin sends ${name} to a site-admin route → 403`, async () => {
      const t = await makeTestApp()
      const [alice] = await t.users('alice')
      const res = await t.request('POST', '/api/v1/admin/users', { token: alice.token, headers: { 'content-type': contentType }, body })
      expect(res.status).toBe(403)
    })
  }

  test('a signed-in user sends malformed JSON → 422 with the JSON message; text/plain → 415', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const bad = await t.request('POST', '/api/v1/user/emails', {
      token: alice.token,
      headers: { 'content-type': 'application/json' },
      body: '{"emails": ',
    })
    expect(bad.status).toBe(422)
    expect((await bad.json()).message).toBe('The request body is not valid JSON')
    const plain = await t.request('POST', '/api/v1/user/settings/profile', {
      token: alice.token,
      headers: { 'content-type': 'text/plain' },
      body: '{"full_name":"X"}',
    })
    expect(plain.status).toBe(415)
    expect(await plain.json()).toMatchObject({ message: 'text/plain bodies are not accepted; send application/json' })
  })
})

describe('login CSRF', () => {
  test('a cross-site HTML form posts valid credentials to /user/signin → 4xx and no session cookie', async () => {
    const t = await makeTestApp()
    await t.users('alice')
    for (const [contentType, body] of [
      ['application/x-www-form-urlencoded', `username=alice&password=${encodeURIComponent(PASSWORD)}`],
      ['text/plain', JSON.stringify({ username: 'alice', password: PASSWORD })],
    ]) {
      const form = await t.request('POST', '/api/v1/user/signin', {
        headers: { 'content-type': contentType, origin: 'https://evil.example' },
        body,
      })
      expect({ contentType, status: form.status, cookies: form.headers.getSetCookie() }).toEqual({ contentType, status: 415, cookies: [] })
    }
    const multipart = new FormData()
    multipart.append('username', 'alice')
    multipart.append('password', PASSWORD)
    const res = await t.request('POST', '/api/v1/user/signin', { body: multipart })
    expect({ status: res.status, cookies: res.headers.getSetCookie() }).toEqual({ status: 415, cookies: [] })
  })
})
