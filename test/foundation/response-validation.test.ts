import { describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { errorHandler } from '../../src/http/errors'
import { makeTestApp } from '../support/app'

describe('answers that do not match their own schema', () => {
  test('an admin creates a user with a 150-character full name → 422 (the Profile limit, 100), nothing created', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', '/api/v1/admin/users', {
      username: 'longname',
      email: 'long@example.com',
      password: 'password123',
      full_name: 'F'.repeat(150),
    })
    expect(res.status).toBe(422)
    expect((await t.request('GET', '/api/v1/users/longname')).status).toBe(404)
  })

  test('an admin creates a user with a 100-character full name → the user reads and updates the profile → 200', async () => {
    const t = await makeTestApp()
    const admin = await t.admin()
    expect(
      (
        await t.as(admin).send('POST', '/api/v1/admin/users', {
          username: 'longname',
          email: 'long@example.com',
          password: 'password123',
          full_name: 'F'.repeat(100),
        })
      ).status,
    ).toBe(201)
    expect((await t.as(admin).get('/api/v1/user/settings/profile?sudo=longname')).status).toBe(200)
    expect((await t.as(admin).send('POST', '/api/v1/user/settings/profile?sudo=longname', { location: 'here' })).status).toBe(200)
  })

  test('a handler answering outside its response schema → 500 logged as a server fault, not a 422 blaming the client', async () => {
    const logged: unknown[] = []
    const app = new Elysia()
      .use(errorHandler('http://localhost/docs', (_request, error) => logged.push(error)))
      .get('/broken', () => ({ name: 'x'.repeat(20) }), { response: { 200: t.Object({ name: t.String({ maxLength: 5 }) }) } })
    const res = await app.handle(new Request('http://localhost/broken'))
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ message: 'Internal Server Error', url: 'http://localhost/docs' })
    expect(logged).toHaveLength(1)
  })
})
