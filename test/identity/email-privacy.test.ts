import { expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'

test('a new account keeps its email private: another signed-in user sees the noreply placeholder until the owner shares it', async () => {
  const t = await makeTestApp()
  const root = await t.admin()
  const [bob] = await t.users('bob')
  const created = await t.as(root).send('POST', '/api/v1/admin/users', {
    username: 'carla',
    email: 'carla@corp.example',
    password: 'a long enough password 1',
    must_change_password: false,
  })
  expect(created.status).toBe(201)
  const seen = await (await t.as(bob!).get('/api/v1/users/carla')).json()
  expect(seen.email).not.toBe('carla@corp.example')
  expect(seen.email).toContain('@noreply.')
  const carlaToken = (
    await (
      await t.request('POST', '/api/v1/users/carla/tokens', {
        body: { name: 't', scopes: ['all'] },
        headers: { authorization: `Basic ${Buffer.from('carla:a long enough password 1').toString('base64')}` },
      })
    ).json()
  ).sha1 as string
  expect((await t.request('GET', '/api/v1/user/settings/profile', { token: carlaToken }).then((r) => r.json())).keep_email_private).toBe(
    true,
  )
  await t.request('POST', '/api/v1/user/settings/profile', { token: carlaToken, body: { keep_email_private: false } })
  expect((await (await t.as(bob!).get('/api/v1/users/carla')).json()).email).toBe('carla@corp.example')
})
