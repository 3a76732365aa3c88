import { t } from 'elysia'
import { TOKEN_SCOPES } from '../../authz/actor'

const scopeList = `one or more of ${TOKEN_SCOPES.join(', ')}`

export const CreateAccessTokenOption = t.Object(
  {
    name: t.String({ maxLength: 255, description: "Token name, unique among the user's tokens" }),
    scopes: t.Optional(t.Array(t.String(), { description: `Scopes, ${scopeList}; ["all"] when omitted` })),
  },
  { title: 'CreateAccessTokenOption' },
)

export const AccessToken = t.Object(
  {
    id: t.Integer({ description: 'Token id' }),
    name: t.String({ description: 'Token name' }),
    sha1: t.String({ description: 'The plaintext token on creation; empty afterwards' }),
    token_last_eight: t.String({ description: 'Last eight characters of the token, to recognise it' }),
    scopes: t.Array(t.String(), { description: 'Scopes the token carries' }),
  },
  { title: 'AccessToken' },
)

export const TokenParams = t.Object({
  username: t.String({ description: 'Owner of the tokens' }),
  token: t.String({ description: 'Token id, or (when not a positive integer) token name' }),
})

/** 9999-12-31T23:59:59Z: any later Unix time is no date a client can show, or store in every int64 reader. */
const LATEST_EXPIRY = 253_402_300_799

export const NewAccessTokenParam = t.Object(
  {
    name: t.String({ maxLength: 255, description: "Token name, unique among the user's tokens" }),
    scopes: t.Optional(t.Array(t.String(), { description: `Scopes, ${scopeList}; ["all"] when omitted` })),
    expDate: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: LATEST_EXPIRY,
        description: 'Expiry, Unix seconds in the future (at most 9999-12-31); 0 or omitted = never',
      }),
    ),
  },
  { title: 'NewAccessTokenParam' },
)

export const SettingsAccessToken = t.Object(
  {
    id: t.Integer({ description: 'Token id' }),
    uid: t.Integer({ description: 'Owner user id' }),
    name: t.String({ description: 'Token name' }),
    token: t.String({ description: 'The plaintext token on creation; empty afterwards' }),
    tokenLastEight: t.String({ description: 'Last eight characters of the token' }),
    scopes: t.Array(t.String(), { description: 'Scopes the token carries' }),
    createdAt: t.Integer({ description: 'Creation time, Unix seconds' }),
    updatedAt: t.Integer({ description: 'Last use (or creation when unused), Unix seconds' }),
    expDate: t.Integer({ description: 'Expiry, Unix seconds; 0 = never' }),
    hasRecentActivity: t.Boolean({ description: 'Used within the last 7 days' }),
    hasUsed: t.Boolean({ description: 'Used at least once' }),
  },
  { title: 'SettingsAccessToken' },
)

export const AccessTokenIdList = t.Object(
  {
    ids: t.Array(t.Integer(), { minItems: 1, description: "Ids of the caller's tokens to delete; others are ignored" }),
  },
  { title: 'AccessTokenIdList' },
)

export const SettingsTokenParams = t.Object({ id: t.Numeric({ description: 'Token id' }) })
