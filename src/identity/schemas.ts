import { t } from 'elysia'

export const User = t.Object(
  {
    id: t.Integer({ description: 'User id' }),
    login: t.String({ description: 'Sign-in name' }),
    username: t.String({ description: 'Backward-compatible alias of login' }),
    login_name: t.String({ description: 'Name at the external sign-in source; empty for local accounts' }),
    full_name: t.String({ description: 'Display name' }),
    email: t.String({ description: 'Primary email; a noreply placeholder when hidden from the caller' }),
    avatar_url: t.String({ description: 'Absolute URL of the avatar image' }),
    language: t.String({ description: 'Preferred UI language; shown to the user and site admins only' }),
    is_admin: t.Boolean({ description: 'Site administrator; shown to the user and site admins only' }),
    last_login: t.String({ format: 'date-time', description: 'Last sign-in; zero time when unknown or hidden' }),
    created: t.String({ format: 'date-time', description: 'When the account was created' }),
    restricted: t.Boolean({ description: 'Restricted accounts see only what they are a member of (always false here)' }),
    type: t.Integer({ description: 'Account type: 0 individual, 1 organization' }),
    active: t.Boolean({ description: 'Account activated; shown to the user and site admins only' }),
    prohibit_login: t.Boolean({ description: 'Sign-in forbidden by an admin; shown to the user and site admins only' }),
    location: t.String({ description: 'Free-text location' }),
    website: t.String({ description: 'Personal website' }),
    description: t.String({ description: 'About the user' }),
    visibility: t.Union([t.Literal('public'), t.Literal('limited'), t.Literal('private')], { description: 'Who may see the profile' }),
    followers_count: t.Integer({ description: 'Number of followers' }),
    following_count: t.Integer({ description: 'Number of users followed' }),
    starred_repos_count: t.Integer({ description: 'Always 0: the platform has no repositories' }),
    orgAdmin: t.Boolean({ description: 'Whether the user is owner or admin of the organization in context' }),
    clientOrgUser: t.Optional(
      t.Boolean({ description: 'Whether the user belongs to a client organization; only with check_client_org=true' }),
    ),
  },
  { title: 'User' },
)
export type User = typeof User.static

export const CreateUserOption = t.Object(
  {
    username: t.String({ description: 'Sign-in name, unique among users and organizations', examples: ['alice'] }),
    email: t.String({ description: 'Primary email address', examples: ['alice@example.com'] }),
    password: t.String({ description: 'Initial password, at least 8 characters' }),
    full_name: t.Optional(t.String({ maxLength: 100, description: 'Display name (as in Gitea, and as the Profile keeps it)' })),
    must_change_password: t.Optional(t.Boolean({ description: 'Ask the user to change the password at next sign-in' })),
    visibility: t.Optional(
      t.Union([t.Literal('public'), t.Literal('limited'), t.Literal('private')], {
        description: 'Profile visibility; public when omitted',
      }),
    ),
    login_name: t.Optional(t.String({ description: 'Accepted for Gitea clients; ignored' })),
    source_id: t.Optional(t.Integer({ description: 'Accepted for Gitea clients; ignored' })),
    send_notify: t.Optional(t.Boolean({ description: 'Accepted for Gitea clients; ignored (no mail is sent)' })),
  },
  { title: 'CreateUserOption' },
)
export type CreateUserOption = typeof CreateUserOption.static

export const EditUserOption = t.Object(
  {
    prohibit_login: t.Optional(
      t.Boolean({
        description: 'true disables the account: no sign-in, and its sessions and tokens stop working at once; false enables it again',
      }),
    ),
  },
  { title: 'EditUserOption' },
)
export type EditUserOption = typeof EditUserOption.static

export const UserQuery = t.Object({
  check_client_org: t.Optional(t.String({ description: 'When "true", fill clientOrgUser' })),
})
