import { t } from 'elysia'

export const FleetmgrApiToken = t.Object(
  {
    userID: t.Integer({ description: 'The user the token acts for: the org system admin, else whoever minted it' }),
    orgID: t.Integer({ description: 'Organization id' }),
    orgName: t.String({ description: 'Organization name' }),
    accessKeyID: t.String({ description: '20 upper-case alphanumerics' }),
    secretAccessKey: t.String({ description: 'The secret (40 base64url characters unless one was given at creation)' }),
  },
  { title: 'FleetmgrApiToken' },
)
export type FleetmgrApiToken = typeof FleetmgrApiToken.static

export const AccessToken = t.Object(
  {
    id: t.Optional(t.Integer({ description: 'Ignored' })),
    name: t.Optional(t.String({ maxLength: 255, description: 'Names the sync token' })),
    sha1: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Taken as the secret when given; generated otherwise' })),
    token_last_eight: t.Optional(t.String({ maxLength: 8, description: 'Ignored' })),
  },
  {
    title: 'FleetmgrAccessToken',
    description: "The contract's AccessToken as the body of fleet-manager token creation; every field optional",
  },
)
export type AccessToken = typeof AccessToken.static
