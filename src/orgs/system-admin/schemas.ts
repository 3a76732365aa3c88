import { t } from 'elysia'

export const AccessTokenInfo = t.Object(
  {
    id: t.Integer({ description: 'Token id' }),
    uid: t.Integer({ description: "The org system admin's user id" }),
    name: t.String({ description: 'Token name' }),
    token: t.String({ description: 'The plaintext token on creation only; empty for existing tokens' }),
    tokenLastEight: t.String({ description: 'Last eight characters of the token' }),
    createdAt: t.Integer({ description: 'Creation time, Unix seconds' }),
    updatedAt: t.Integer({ description: 'Last use (or creation when unused), Unix seconds' }),
    expDate: t.Integer({ description: 'Expiry, Unix seconds; 0 = never' }),
    hasRecentActivity: t.Boolean({ description: 'Used within the last 7 days' }),
    hasUsed: t.Boolean({ description: 'Used at least once' }),
  },
  { title: 'AccessTokenInfo', description: "Organization system admin's tokens" },
)
export type AccessTokenInfo = typeof AccessTokenInfo.static

export const CreateOrgAccessTokenOption = t.Object(
  {
    name: t.String({ maxLength: 255, description: "Token name, unique among the system admin's tokens" }),
    scopes: t.Optional(
      t.Array(t.String(), { description: 'Access-token scopes; ["all"] when omitted (never beyond the caller\'s own token)' }),
    ),
  },
  { description: 'A new access token of the organization system admin' },
)
export type CreateOrgAccessTokenOption = typeof CreateOrgAccessTokenOption.static

export const CreateOrgMsgbusTokenOption = t.Object(
  {
    clusterID: t.Optional(
      t.String({ maxLength: 255, description: 'Cluster the credential is for (account type `cluster`); omitted: account type `org`' }),
    ),
    productName: t.Optional(t.String({ maxLength: 255, description: 'Product the credential is for' })),
  },
  { description: 'A new message-bus credential of the organization system admin' },
)
export type CreateOrgMsgbusTokenOption = typeof CreateOrgMsgbusTokenOption.static

export const OrgTokenParams = t.Object({
  org: t.String({ description: 'Organization slug' }),
  id: t.Numeric({ minimum: 1, description: 'Token id' }),
})
