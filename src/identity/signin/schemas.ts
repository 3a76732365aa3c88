import { t } from 'elysia'

export const SignInParams = t.Object(
  {
    username: t.String({ maxLength: 320, description: 'User name or any email address of the account' }),
    password: t.String({ maxLength: 1024, description: 'The account password' }),
    remember: t.Optional(t.Boolean({ description: 'Keep the session for 30 days instead of 24 hours' })),
  },
  { title: 'SignInParams' },
)

export const LoginMethodQuery = t.Object({
  orgname: t.Optional(t.String({ description: 'Organization whose sign-in method is asked' })),
  username: t.Optional(t.String({ description: 'User name or email whose sign-in method is asked' })),
})

export const LoginMethodResponse = t.Object(
  {
    method: t.Union([t.Literal('password'), t.Literal('sso')], { description: 'password or sso' }),
    orgAuthSourceID: t.Optional(t.Integer({ description: "Only for sso: the organization's auth source id" })),
    providerName: t.Optional(t.String({ description: 'Only for sso: OAuth2/OIDC provider type' })),
    oauthCallbackPath: t.Optional(t.String({ description: 'Only for sso: /user/oauth2/org-<orgID>' })),
    displayName: t.Optional(t.String({ description: 'Only for sso: name to show on the button' })),
  },
  { title: 'LoginMethodResponse' },
)

export const SignInTicketCookie = t.Cookie({
  platform_signin_ticket: t.Optional(
    t.String({ description: 'Set by the 405 of POST /user/signin for accounts with a second factor; valid five minutes' }),
  ),
})

export const SignInCodeParams = t.Object(
  {
    passcode: t.String({
      minLength: 6,
      maxLength: 64,
      description: 'A current 6-digit TOTP code, or the scratch token (which then stops working)',
    }),
  },
  { title: 'SignInCodeParams' },
)

export const AssertionOptions = t.Object(
  {
    publicKey: t.Record(t.String(), t.Unknown(), {
      description: 'PublicKeyCredentialRequestOptionsJSON (binary fields base64url) for navigator.credentials.get',
    }),
  },
  { description: 'Opaque credential-request options; the challenge answers once' },
)

export const AssertionResponse = t.Object(
  {
    id: t.String({ description: 'Credential id, base64url' }),
    rawId: t.String({ description: 'Credential id, base64url' }),
    type: t.Literal('public-key', { description: 'Always public-key' }),
    response: t.Object(
      {
        clientDataJSON: t.String({ description: 'base64url client data' }),
        authenticatorData: t.String({ description: 'base64url authenticator data' }),
        signature: t.String({ description: 'base64url signature' }),
        userHandle: t.Optional(t.String({ description: 'base64url user handle' })),
      },
      { additionalProperties: true, description: 'AuthenticatorAssertionResponse as JSON' },
    ),
    clientExtensionResults: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Extension outputs' })),
    authenticatorAttachment: t.Optional(t.String({ description: 'platform or cross-platform' })),
  },
  { additionalProperties: true, description: 'The security key response: PublicKeyCredential.toJSON() of navigator.credentials.get' },
)
