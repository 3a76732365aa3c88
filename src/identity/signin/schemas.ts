import { t } from 'elysia'

export const SignInParams = t.Object({
  username: t.String({ maxLength: 320, description: 'User name or any email address of the account' }),
  password: t.String({ maxLength: 1024, description: 'The account password' }),
  remember: t.Optional(t.Boolean({ description: 'Keep the session for 30 days instead of 24 hours' })),
}, { description: 'SignInParams' })

export const LoginMethodQuery = t.Object({
  orgname: t.Optional(t.String({ description: 'Organization whose sign-in method is asked' })),
  username: t.Optional(t.String({ description: 'User name or email whose sign-in method is asked' })),
})

export const LoginMethodResponse = t.Object({
  method: t.Union([t.Literal('password'), t.Literal('sso')], { description: 'password or sso' }),
  orgAuthSourceID: t.Optional(t.Integer({ description: 'Only for sso: the organization\'s auth source id' })),
  providerName: t.Optional(t.String({ description: 'Only for sso: OAuth2/OIDC provider type' })),
  oauthCallbackPath: t.Optional(t.String({ description: 'Only for sso: /user/oauth2/org-<orgID>' })),
  displayName: t.Optional(t.String({ description: 'Only for sso: name to show on the button' })),
}, { description: 'LoginMethodResponse' })
