import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { basic, makeTestApp, PASSWORD } from '../support/app'

/** T6: an answer that carries a secret is never kept by a browser or a shared cache. */
describe('secret-bearing answers', () => {
  test('token, OAuth2 secret, TOTP secret and scratch token answers → Cache-Control: no-store', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const security = '/api/v1/user/settings/security/twofa'
    const enroll = await t.as(alice).get(`${security}/enroll`)
    const { secret } = await enroll.clone().json()
    const answers: [string, Response][] = [
      ['settings token', await t.as(alice).send('POST', '/api/v1/user/settings/tokens/access-tokens/', { name: 'a' })],
      [
        'basic token',
        await t.request('POST', '/api/v1/users/alice/tokens', {
          headers: { authorization: basic('alice', PASSWORD) },
          body: { name: 'b' },
        }),
      ],
      [
        'oauth2 app',
        await t.as(alice).send('POST', '/api/v1/user/settings/applications/oauth2', { name: 'c', redirect_uris: ['https://a.example/cb'] }),
      ],
      ['totp secret', enroll],
      ['scratch token', await t.as(alice).send('POST', `${security}/enroll`, { passcode: await generate({ secret }) })],
      ['new scratch token', await t.as(alice).send('POST', `${security}/regenerate_scratch`)],
    ]
    expect(answers.map(([what, res]) => [what, res.status < 300, res.headers.get('cache-control')])).toEqual(
      answers.map(([what]) => [what, true, 'no-store']),
    )
  })
})
