import { t } from 'elysia'

export const OrgAuthSourceResponse = t.Object(
  {
    id: t.Integer({ description: "The source's id: the organization's own id, not a global login source" }),
    orgID: t.Integer({ description: 'Organization id' }),
    name: t.String({ description: 'Display name shown on the sign-in button' }),
    provider: t.String({ description: "OAuth2/OIDC provider type (Gitea's names; openidConnect fits every OIDC provider)" }),
    clientID: t.String({ description: 'Client id registered at the provider' }),
    discoveryURL: t.Optional(t.String({ description: 'OpenID configuration URL (or the issuer); omitted when empty' })),
    isActive: t.Boolean({ description: 'Whether the source is in use; true on create' }),
    enforceForMembers: t.Boolean({ description: 'Members must sign in through this source: password sign-in is refused for them' }),
  },
  { title: 'OrgAuthSourceResponse', description: 'The client secret is write-only and never returned' },
)
export type OrgAuthSourceResponse = typeof OrgAuthSourceResponse.static

const common = {
  discoveryURL: t.Optional(
    t.String({
      maxLength: 2048,
      description: 'OpenID configuration URL (…/.well-known/openid-configuration) or the issuer URL; fetched and checked on save',
    }),
  ),
  enforceForMembers: t.Optional(t.Boolean({ description: "Refuse password sign-in for the org's members (site admins exempt)" })),
}

export const OrgAuthSourceOption = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: 'Display name' }),
    provider: t.String({ minLength: 1, maxLength: 50, description: 'Provider type, e.g. openidConnect' }),
    clientID: t.String({ minLength: 1, maxLength: 512, description: 'Client id registered at the provider' }),
    clientSecret: t.String({ minLength: 1, maxLength: 4096, description: 'Client secret; write-only, sealed at rest' }),
    ...common,
  },
  { title: 'OrgAuthSourceOption' },
)
export type OrgAuthSourceOption = typeof OrgAuthSourceOption.static

export const OrgAuthSourceUpdateOption = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: 'Display name' }),
    provider: t.String({ minLength: 1, maxLength: 50, description: 'Provider type, e.g. openidConnect' }),
    clientID: t.String({ minLength: 1, maxLength: 512, description: 'Client id registered at the provider' }),
    clientSecret: t.Optional(t.String({ maxLength: 4096, description: 'New client secret; omitted or empty keeps the stored one' })),
    isActive: t.Optional(t.Boolean({ description: 'Pause (false) or resume (true) the source' })),
    ...common,
  },
  { title: 'OrgAuthSourceUpdateOption' },
)
export type OrgAuthSourceUpdateOption = typeof OrgAuthSourceUpdateOption.static

export const SsoParams = t.Object({ source: t.String({ description: 'org-<orgID>: the organization whose source signs the user in' }) })

export const SsoQuery = t.Object(
  {
    code: t.Optional(t.String({ maxLength: 4096, description: 'Callback: the authorization code from the provider' })),
    state: t.Optional(t.String({ maxLength: 512, description: 'Callback: the state sent at the start' })),
    error: t.Optional(t.String({ maxLength: 200, description: "Callback: the provider's error code" })),
    error_description: t.Optional(t.String({ maxLength: 1000, description: "Callback: the provider's error text" })),
    iss: t.Optional(t.String({ maxLength: 2048, description: 'Callback: the issuer (RFC 9207)' })),
    redirect_to: t.Optional(t.String({ maxLength: 2048, description: 'Start: where to land after signing in; a path on this site' })),
  },
  { additionalProperties: true },
)
export type SsoQuery = typeof SsoQuery.static
