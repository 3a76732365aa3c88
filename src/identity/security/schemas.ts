import { t } from 'elysia'

export const TwoFAStatus = t.Object(
  {
    twofaEnrolled: t.Boolean({ description: 'TOTP two-factor authentication is on' }),
    webauthnEnrolled: t.Boolean({ description: 'At least one WebAuthn security key is registered' }),
    scratchTokenSet: t.Boolean({ description: 'An unused scratch (recovery) token exists' }),
  },
  { title: 'TwoFAStatus' },
)

export const Security = t.Object(
  {
    secret: t.String({ description: 'The new TOTP secret, base32; shown only while enrolling' }),
    qrImage: t.String({ description: 'The otpauth:// URI of the secret as a QR code, a data:image/png;base64 URL' }),
    qrSvg: t.String({
      description: 'The same QR code as SVG markup, for pages whose Content-Security-Policy refuses data: images (the web console)',
    }),
  },
  { title: 'Security' },
)

export const TwoFactorAuthParams = t.Object(
  {
    passcode: t.String({ pattern: '^[0-9]{6}$', description: 'A current 6-digit code of the new secret' }),
  },
  { title: 'TwoFactorAuthParams' },
)

export const ScratchToken = t.String({ description: 'The scratch token: a one-time recovery code, shown only now' })

export const WebAuthnSecurityKeys = t.Object(
  {
    id: t.Integer({ description: 'Key id' }),
    name: t.String({ description: 'Nickname given at registration' }),
    createdAt: t.String({ format: 'date-time', description: 'When the key was registered' }),
  },
  { title: 'WebAuthnSecurityKeys' },
)

export const WebauthnRegistrationOptions = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 255, description: 'Nickname of the key to register; unique per user' }),
  },
  { title: 'WebauthnRegistrationOptions' },
)

export const CredentialCreationOptions = t.Object(
  {
    publicKey: t.Record(t.String(), t.Unknown(), {
      description: 'PublicKeyCredentialCreationOptionsJSON (binary fields base64url) for navigator.credentials.create',
    }),
  },
  { description: 'Opaque credential-creation options; the challenge is valid for five minutes and once' },
)

export const RegistrationResponse = t.Object(
  {
    id: t.String({ description: 'Credential id, base64url' }),
    rawId: t.String({ description: 'Credential id, base64url' }),
    type: t.Literal('public-key', { description: 'Always public-key' }),
    response: t.Object(
      {
        clientDataJSON: t.String({ description: 'base64url client data' }),
        attestationObject: t.String({ description: 'base64url attestation object' }),
        transports: t.Optional(t.Array(t.String(), { description: 'Transports the authenticator supports' })),
      },
      { additionalProperties: true, description: 'AuthenticatorAttestationResponse as JSON' },
    ),
    clientExtensionResults: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'Extension outputs' })),
    authenticatorAttachment: t.Optional(t.String({ description: 'platform or cross-platform' })),
  },
  { additionalProperties: true, description: 'The security key response: PublicKeyCredential.toJSON() of navigator.credentials.create' },
)

export const KeyIdParams = t.Object({ id: t.Integer({ minimum: 1, description: 'Security key id' }) })

export const SessionInfoAPIForm = t.Object(
  {
    sid: t.String({ description: 'Opaque session id (never the cookie value)' }),
    createdAt: t.String({ format: 'date-time', description: 'When the session was started' }),
    lastSeenAt: t.String({ format: 'date-time', description: 'Last request seen on the session (to the minute)' }),
    ip: t.String({ description: 'Client address at sign-in' }),
    userAgent: t.String({ description: 'User-Agent at sign-in' }),
    current: t.Boolean({ description: 'True for the session this request came in on' }),
  },
  { title: 'SessionInfoAPIForm' },
)

export const SidParams = t.Object({ sid: t.String({ minLength: 1, maxLength: 64, description: 'Session id from the list' }) })

export const AccountLink = t.Object(
  {
    id: t.Integer({ description: 'Login source id' }),
    provider: t.String({ description: 'OAuth2/OIDC provider type of the login source' }),
    name: t.String({ description: 'Login source name' }),
    externalID: t.String({ description: 'The account id at the provider' }),
    createdAt: t.String({ format: 'date-time', description: 'When the link was made' }),
  },
  { title: 'AccountLink' },
)

export const AccountLinkParams = t.Object(
  {
    id: t.Integer({ minimum: 1, description: 'Login source id of the link to remove' }),
  },
  { title: 'AccountLinkParams' },
)
