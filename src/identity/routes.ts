import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { admitSignedIn, guard } from '../http/guard'
import { jsonAnswer } from '../http/json-answer'
import { leanRoute } from '../http/lean-route'
import { ErrorBody } from '../http/schemas'
import { andThen } from '../maybe-promise'
import { avatarRoutes } from './avatars/routes'
import { emailRoutes } from './emails/routes'
import { CreateUserOption, EditUserOption, User, UserQuery } from './schemas'
import { createUser, editUser, presentUser } from './service'
import { settingsRoutes } from './settings/routes'
import { signInRoutes } from './signin/routes'
import { tokenRoutes } from './tokens/routes'
import { userRoutes } from './users/routes'
import { UsernameParams } from './users/schemas'
import { presentSelf, presentSelfText } from './users/service'

/** The identity area: each sub-area's plugin carries its own `/api/v1` prefix. */
export const identityRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity' })
    .use(userRoutes(deps))
    .use(tokenRoutes(deps))
    .use(signInRoutes(deps))
    .use(emailRoutes(deps))
    .use(settingsRoutes(deps))
    .use(avatarRoutes(deps))
    .use(accountRoutes(deps))

/** Who may read their own profile: any signed-in caller, one who must change the password too, with a user scope. */
const SELF_READ = { signedIn: 'signed-in', scope: 'user', allowedWhilePasswordMustChange: true } as const

/**
 * `GET /api/v1/user` without a query, what every script asks first to learn whose token it holds, answered outside
 * Elysia's lifecycle (http/lean-route.ts) and admitted as the route below declares; with a query, that route answers.
 */
const selfRead = (deps: Deps) =>
  leanRoute(deps, {
    name: 'identity.account.self',
    match: (request, path) => (request.method === 'GET' && path === '/api/v1/user' && !request.url.includes('?') ? {} : undefined),
    route: () => '/api/v1/user',
    admit: (actor, _params, request) => admitSignedIn(deps, actor, SELF_READ, request),
    handle: (me) => andThen(presentSelfText(deps.db, me.user, deps.config.publicUrl), jsonAnswer),
  })

const accountRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.account', prefix: '/api/v1' })
    .use(guard(deps))
    .use(selfRead(deps))
    .get(
      '/user',
      ({ me, query }) =>
        presentSelf(
          deps.db,
          me.user,
          deps.config.publicUrl,
          // No client organizations exist on this platform, so the honest answer is false.
          query.check_client_org === 'true' ? { clientOrgUser: false } : {},
        ),
      {
        ...SELF_READ,
        query: UserQuery,
        response: { 200: User, 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Get the authenticated user', tags: ['user'] },
      },
    )
    .post(
      '/admin/users',
      async ({ me, body, status }) => {
        const user = await createUser(deps.db, {
          username: body.username,
          email: body.email,
          password: body.password,
          fullName: body.full_name,
          mustChangePassword: body.must_change_password,
          visibility: body.visibility,
        })
        return status(201, presentUser(user, { user: me.user, publicUrl: deps.config.publicUrl }))
      },
      {
        signedIn: 'site-admin',
        scope: 'admin',
        body: CreateUserOption,
        response: { 201: User, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Create a user (site admin)', tags: ['admin'] },
      },
    )
    .patch(
      '/admin/users/:username',
      async ({ me, params, body }) =>
        presentUser(await editUser(deps.db, me.user, params.username, body), { user: me.user, publicUrl: deps.config.publicUrl }),
      {
        signedIn: 'site-admin',
        scope: 'admin',
        params: UsernameParams,
        body: EditUserOption,
        response: { 200: User, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Disable or enable a user (site admin)', tags: ['admin'] },
      },
    )
