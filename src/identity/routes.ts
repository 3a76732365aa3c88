import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { CreateUserOption, User, UserQuery } from './schemas'
import { createUser, presentUser } from './service'

export const identityRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user', ({ me }) => presentUser(me.user, { user: me.user, publicUrl: deps.config.publicUrl }), {
      permission: 'signed-in',
      scope: 'user',
      query: UserQuery,
      response: { 200: User, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Get the authenticated user', tags: ['user'] },
    })
    .post('/admin/users', async ({ me, body, status }) => {
      const user = await createUser(deps.db, {
        username: body.username, email: body.email, password: body.password, fullName: body.full_name,
        mustChangePassword: body.must_change_password, visibility: body.visibility,
      })
      return status(201, presentUser(user, { user: me.user, publicUrl: deps.config.publicUrl }))
    }, {
      permission: 'site-admin',
      scope: 'admin',
      body: CreateUserOption,
      response: { 201: User, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Create a user (site admin)', tags: ['admin'] },
    })
