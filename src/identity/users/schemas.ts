import { t } from 'elysia'
import { User } from '../schemas'

export const UsernameParams = t.Object({ username: t.String({ description: 'User name, case-insensitive' }) })
export const FollowTargetParams = t.Object({
  username: t.String({ description: 'The follower, case-insensitive' }),
  target: t.String({ description: 'The user who may be followed, case-insensitive' }),
})

export const UserSearchQuery = t.Object({
  q: t.Optional(t.String({ description: 'Case-insensitive substring of the user name or full name' })),
  uid: t.Optional(t.String({ description: 'Exact user id' })),
  page: t.Optional(t.String({ description: 'Page number, 1-based; ≤0 or junk means 1' })),
  limit: t.Optional(t.String({ description: 'Page size; default 30 (or the saved Pagination setting), at most 50' })),
})

export const UserSearchResult = t.Object(
  {
    ok: t.Boolean({ description: 'Always true on success' }),
    data: t.Array(User, { description: 'Matching individual users, by name' }),
  },
  { title: 'UserSearchResult' },
)

export const Validation = t.Object(
  {
    Status: t.Union([t.Literal('VALID'), t.Literal('USER_EXISTS'), t.Literal('RESERVED'), t.Literal('INVALID'), t.Literal('NOT_ALLOWED')], {
      description: 'VALID, USER_EXISTS (taken by a user or an organization), RESERVED, INVALID (form), NOT_ALLOWED (reserved pattern)',
    }),
  },
  { title: 'Validation' },
)

export const ValidateUsernameQuery = t.Object({
  user_name: t.Optional(t.String({ description: 'Proposed user name' })),
})
export const ValidateOrgnameQuery = t.Object({
  org: t.Optional(t.String({ description: 'The organization being renamed; its own name is VALID' })),
  user_name: t.Optional(t.String({ description: 'Proposed organization name' })),
})
export const ValidateEmailQuery = t.Object({
  email: t.Optional(t.String({ description: 'Proposed email address' })),
})
