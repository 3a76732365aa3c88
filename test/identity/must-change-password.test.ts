import { expect, test } from 'bun:test'
import { Messages } from '../../src/authz/authorize'
import { basic, makeTestApp } from '../support/app'

test('a user created with must_change_password → 403 everywhere but GET /user and the password change; after it → 200', async () => {
  const t = await makeTestApp()
  const admin = await t.admin()
  const created = await t.as(admin).send('POST', '/api/v1/admin/users', {
    username: 'newbie',
    email: 'newbie@example.com',
    password: 'first-password-1',
    must_change_password: true,
  })
  expect(created.status).toBe(201)
  const as = (password: string) => ({ authorization: basic('newbie', password) })

  expect((await t.request('GET', '/api/v1/user', { headers: as('first-password-1') })).status).toBe(200)
  const blocked = await t.request('GET', '/api/v1/user/emails', { headers: as('first-password-1') })
  expect(blocked.status).toBe(403)
  expect((await blocked.json()).message).toBe(Messages.mustChangePassword)

  const changed = await t.request('POST', '/api/v1/user/settings/account/password', {
    headers: as('first-password-1'),
    body: { old_password: 'first-password-1', password: 'second-password-2', retype: 'second-password-2' },
  })
  expect(changed.status).toBe(200)
  expect((await t.request('GET', '/api/v1/user/emails', { headers: as('second-password-2') })).status).toBe(200)
})
