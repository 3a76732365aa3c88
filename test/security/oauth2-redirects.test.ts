import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/identity/oauth2/service'
import { basic, makeTestApp, PASSWORD } from '../support/app'

const BASE = '/api/v1/user/settings/applications/oauth2'

/** Alice registers an application redirecting to `uri`: refused with `message`, and she has no application. */
async function expectRegistrationRefused(uri: string, message: string) {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const res = await t.as(alice).send('POST', BASE, { name: 'x', redirect_uris: [uri] })
  expect(res.status).toBe(422)
  expect((await res.json()).message).toBe(message)
  expect(await (await t.as(alice).get(BASE)).json()).toEqual([])
}

/** Alice's application redirecting to https://a.example/cb; an update whose redirect_uris form field is `lines` → 422, the old URI kept. */
async function expectUpdateRefused(lines: string) {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const app = await (await t.as(alice).send('POST', BASE, { name: 'x', redirect_uris: ['https://a.example/cb'] })).json()
  const form = new FormData()
  form.append('name', 'x')
  form.append('redirect_uris', lines)
  expect((await t.as(alice).send('PUT', `${BASE}/${app.id}`, form)).status).toBe(422)
  expect((await (await t.as(alice).get(`${BASE}/${app.id}`)).json()).redirect_uris).toEqual(['https://a.example/cb'])
}

describe('OAuth2 redirect URI schemes', () => {
  for (const uri of [
    'javascript:alert(document.cookie)',
    'JavaScript://x/%0aalert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'blob:https://a.example/x',
  ]) {
    test(`a user registers an application redirecting to ${uri.slice(0, 20)}… → 422, nothing stored`, () =>
      expectRegistrationRefused(uri, Messages.redirectUriScheme))
  }

  test("a user changes an application's redirect URI to javascript: → 422, the old one kept", () =>
    expectUpdateRefused('javascript:alert(1)'))

  test('web, loopback and native private-use scheme URIs → 200', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const uris = ['https://a.example/cb', 'http://127.0.0.1:8080/cb', 'http://localhost/cb', 'com.example.app:/oauth2redirect']
    const res = await t.as(alice).send('POST', BASE, { name: 'x', redirect_uris: uris })
    expect(res.status).toBe(200)
    expect((await res.json()).redirect_uris).toEqual(uris)
  })
})

describe('OAuth2 redirect URIs are matched exactly', () => {
  for (const uri of [
    ' https://a.example/cb',
    'https://a.example/cb ',
    'https://a.example/c b',
    'https://a.example/cb\t',
    '\thttps://a.example/cb',
  ])
    test(`a user registers ${JSON.stringify(uri)} → 422 naming the rule, nothing stored (never trimmed into another URI)`, () =>
      expectRegistrationRefused(uri, Messages.redirectUriNotExact))

  test('an update whose form lines carry a trailing space → 422, the old URIs kept', () =>
    expectUpdateRefused('https://a.example/cb \nhttps://b.example/cb'))

  test('an authorization request naming the registered URI with a space around it → 400, no redirect', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await (await t.as(alice).send('POST', BASE, { name: 'x', redirect_uris: ['https://a.example/cb'] })).json()
    for (const uri of [' https://a.example/cb', 'https://a.example/cb ', 'https://a.example/cb%20']) {
      const query = new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: uri })
      const res = await t.request('GET', `/login/oauth/authorize?${query}`, { headers: { authorization: basic('alice', PASSWORD) } })
      expect(`${JSON.stringify(uri)} → ${res.status}`).toBe(`${JSON.stringify(uri)} → 400`)
      expect(res.headers.get('location')).toBeNull()
    }
  })
})
