import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { answerPage, PageQuery } from '../../http/pagination'
import { ErrorBody } from '../../http/schemas'
import { User } from '../schemas'
import {
  FollowTargetParams,
  UsernameParams,
  UserSearchQuery,
  UserSearchResult,
  ValidateEmailQuery,
  ValidateOrgnameQuery,
  ValidateUsernameQuery,
  Validation,
} from './schemas'
import * as users from './service'

const FOLLOW_ERRORS = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** Users: search, profiles, follow relations, name and email validation. */
export const userRoutes = (deps: Deps) => {
  const reader = (user: Parameters<typeof users.visibleTo>[0]['user']) => ({ user, publicUrl: deps.config.publicUrl })
  const publicUrl = deps.config.publicUrl
  return new Elysia({ name: 'identity.users', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/users/search',
      async ({ actor, query, set, request }) => ({
        ok: true,
        data: await answerPage(publicUrl, { query, set, request }, actor?.user, (page) =>
          users.searchUsers(deps.db, reader(actor?.user), query, page),
        ),
      }),
      {
        public: true,
        scope: 'user',
        query: UserSearchQuery,
        response: { 200: UserSearchResult, 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Search users', tags: ['user'] },
      },
    )
    .get(
      '/users/:username',
      async ({ actor, params }) =>
        users.presentOne(deps.db, await users.findVisibleUser(deps.db, reader(actor?.user), params.username), reader(actor?.user)),
      {
        public: true,
        scope: 'user',
        params: UsernameParams,
        response: { 200: User, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: 'Get a user', tags: ['user'] },
      },
    )
    .get(
      '/users/:username/followers',
      async ({ me, params, query, set, request }) => {
        const who = reader(me.user)
        const user = await users.findVisibleUser(deps.db, who, params.username)
        return answerPage(publicUrl, { query, set, request }, me.user, (page) =>
          users.listFollowRelations(deps.db, who, user, 'followers', page),
        )
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(User), ...FOLLOW_ERRORS },
        detail: { summary: 'List the followers of a user', tags: ['user'] },
      },
    )
    .get(
      '/users/:username/following',
      async ({ me, params, query, set, request }) => {
        const who = reader(me.user)
        const user = await users.findVisibleUser(deps.db, who, params.username)
        return answerPage(publicUrl, { query, set, request }, me.user, (page) =>
          users.listFollowRelations(deps.db, who, user, 'following', page),
        )
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(User), ...FOLLOW_ERRORS },
        detail: { summary: 'List the users a user follows', tags: ['user'] },
      },
    )
    .get(
      '/users/:username/following/:target',
      async ({ me, params, status }) => {
        await users.assertFollowing(deps.db, reader(me.user), params.username, params.target)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: FollowTargetParams,
        response: { 204: t.Void(), ...FOLLOW_ERRORS },
        detail: { summary: 'Check whether a user follows another (204 yes, 404 no)', tags: ['user'] },
      },
    )
    .get(
      '/user/followers',
      ({ me, query, set, request }) =>
        answerPage(publicUrl, { query, set, request }, me.user, (page) =>
          users.listFollowRelations(deps.db, reader(me.user), me.user, 'followers', page),
        ),
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: PageQuery,
        response: { 200: t.Array(User), 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'List my followers', tags: ['user'] },
      },
    )
    .get(
      '/user/following',
      ({ me, query, set, request }) =>
        answerPage(publicUrl, { query, set, request }, me.user, (page) =>
          users.listFollowRelations(deps.db, reader(me.user), me.user, 'following', page),
        ),
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: PageQuery,
        response: { 200: t.Array(User), 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'List the users I follow', tags: ['user'] },
      },
    )
    .get(
      '/user/following/:username',
      async ({ me, params, status }) => {
        await users.assertFollowing(deps.db, reader(me.user), me.user.name, params.username)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: UsernameParams,
        response: { 204: t.Void(), ...FOLLOW_ERRORS },
        detail: { summary: 'Check whether I follow a user (204 yes, 404 no)', tags: ['user'] },
      },
    )
    .put(
      '/user/following/:username',
      async ({ me, params, status }) => {
        await users.follow(deps.db, me.user, params.username)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: UsernameParams,
        response: { 204: t.Void(), ...FOLLOW_ERRORS },
        detail: { summary: 'Follow a user (no-op for oneself or when already following)', tags: ['user'] },
      },
    )
    .delete(
      '/user/following/:username',
      async ({ me, params, status }) => {
        await users.unfollow(deps.db, me.user, params.username)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: UsernameParams,
        response: { 204: t.Void(), ...FOLLOW_ERRORS },
        detail: { summary: 'Stop following a user', tags: ['user'] },
      },
    )
    .post('/user/validate/username', async ({ query }) => ({ Status: await users.validateName(deps.db, query.user_name ?? '') }), {
      signedIn: 'signed-in',
      scope: 'user',
      query: ValidateUsernameQuery,
      response: { 200: Validation, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Check a proposed user name', tags: ['user'] },
    })
    .post(
      '/user/validate/orgname',
      async ({ query }) => ({ Status: await users.validateName(deps.db, query.user_name ?? '', query.org) }),
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: ValidateOrgnameQuery,
        response: { 200: Validation, 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Check a proposed organization name', tags: ['user'] },
      },
    )
    .post('/user/validate/email', async ({ query }) => ({ Status: await users.validateEmail(deps.db, query.email ?? '') }), {
      signedIn: 'signed-in',
      scope: 'user',
      query: ValidateEmailQuery,
      response: { 200: Validation, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Check a proposed email address', tags: ['user'] },
    })
}
