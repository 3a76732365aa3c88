import { t } from 'elysia'

export const OAuth2Application = t.Object(
  {
    id: t.Integer({ description: 'Application id' }),
    name: t.String({ description: 'Application name shown on the consent screen' }),
    client_id: t.String({ description: 'Public client identifier (a UUID)' }),
    client_secret: t.Optional(t.String({ description: 'Client secret: only in the creation response, stored hashed' })),
    redirect_uris: t.Array(t.String(), { description: 'Redirect URIs; the authorization request must name one exactly' }),
    confidential_client: t.Boolean({ description: 'Confidential clients authenticate with the secret; public ones must use PKCE' }),
    created: t.String({ format: 'date-time', description: 'When the application was registered' }),
  },
  { title: 'OAuth2Application' },
)

export const OAuth2ApplicationParams = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 255, description: 'Application name' }),
    redirect_uris: t.Array(t.String({ maxLength: 2048 }), {
      minItems: 1,
      maxItems: 20,
      description: 'Absolute redirect URIs without fragment',
    }),
    confidential_client: t.Optional(t.Boolean({ description: 'true (default) for server-side clients that keep a secret' })),
  },
  { title: 'OAuth2ApplicationParams' },
)

export const OAuth2ApplicationForm = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 255, description: 'Application name' }),
    redirect_uris: t.Union([t.String({ maxLength: 20_000 }), t.Array(t.String({ maxLength: 2048 }), { maxItems: 20 })], {
      description: "Redirect URIs: the field repeated, or one value with one URI per line (as Gitea's form)",
    }),
    confidential_client: t.Optional(t.BooleanString({ description: 'true or false; unchanged when omitted' })),
  },
  { title: 'OAuth2ApplicationForm', description: 'OAuth2ApplicationParams as the settings form sends them (multipart)' },
)

export const ApplicationIdParams = t.Object({ id: t.Integer({ minimum: 1, description: 'Application id' }) })

const authorizationFields = {
  response_type: t.String({ description: 'Must be code' }),
  client_id: t.String({ description: "The application's client_id" }),
  redirect_uri: t.String({ description: "One of the application's redirect URIs, exactly" }),
  state: t.Optional(t.String({ maxLength: 1024, description: 'Opaque value returned to the client unchanged' })),
  scope: t.Optional(t.String({ maxLength: 1024, description: 'Space-separated token scopes; all when omitted' })),
  code_challenge: t.Optional(
    t.String({ maxLength: 128, description: 'PKCE challenge, base64url SHA-256 of the verifier (required for public clients)' }),
  ),
  code_challenge_method: t.Optional(t.String({ description: 'Must be S256 when code_challenge is sent' })),
}

export const AuthorizeQuery = t.Object(authorizationFields, { description: 'OAuth2 authorization request (RFC 6749 §4.1.1, RFC 7636)' })

export const GrantParams = t.Object(
  {
    ...authorizationFields,
    granted: t.Union([t.Boolean(), t.Literal('true'), t.Literal('false')], { description: "The user's answer" }),
  },
  { description: "The user's answer to an authorization request, with the request repeated" },
)

export const ConsentRequest = t.Object(
  {
    application: t.String({ description: 'Name of the application asking' }),
    client_id: t.String({ description: 'Its client_id' }),
    redirect_uri: t.String({ description: 'Where the answer goes' }),
    scopes: t.Array(t.String(), { description: 'Scopes the access token would carry' }),
    state: t.String({ description: "The client's state value" }),
  },
  { description: 'What the user is asked to approve; answer with POST /login/oauth/grant' },
)

export const GrantLocation = t.Object(
  { location: t.String({ description: 'Where the browser goes next: the redirect URI with code and state, or with the error' }) },
  {
    title: 'GrantLocation',
    description: 'The redirect of POST /login/oauth/grant, for a page that navigates itself (Accept: application/json)',
  },
)

export const TokenRequest = t.Object(
  {
    grant_type: t.Optional(t.String({ description: 'authorization_code, refresh_token or urn:ietf:params:oauth:grant-type:device_code' })),
    device_code: t.Optional(t.String({ description: 'The device code (device_code grant, RFC 8628)' })),
    code: t.Optional(t.String({ description: 'The authorization code (authorization_code grant)' })),
    redirect_uri: t.Optional(t.String({ description: 'The redirect URI of the authorization request' })),
    code_verifier: t.Optional(t.String({ description: 'PKCE verifier' })),
    refresh_token: t.Optional(t.String({ description: 'The refresh token (refresh_token grant)' })),
    scope: t.Optional(t.String({ description: 'On refresh: the same or fewer scopes' })),
    client_id: t.Optional(t.String({ description: 'Client id, when not sent with HTTP Basic' })),
    client_secret: t.Optional(t.String({ description: 'Client secret, when not sent with HTTP Basic' })),
  },
  { description: 'Token request (RFC 6749 §4.1.3, §6), form-encoded or JSON' },
)

export const TokenResponse = t.Object(
  {
    access_token: t.String({ description: 'Bearer token for API calls as the user, with the granted scopes' }),
    token_type: t.Literal('bearer', { description: 'Always bearer' }),
    expires_in: t.Optional(
      t.Integer({ description: 'Seconds the access token lives (none: a platform-cli access token, which does not expire)' }),
    ),
    refresh_token: t.Optional(t.String({ description: 'Single-use token for the next access token (none for platform-cli)' })),
    scope: t.String({ description: 'Granted scopes, space-separated' }),
  },
  { description: 'Token response (RFC 6749 §5.1)' },
)

export const OAuthErrorBody = t.Object(
  {
    error: t.String({ description: 'RFC 6749 §5.2 error code' }),
    error_description: t.String({ description: 'What went wrong, for a person to read' }),
  },
  { description: 'Token endpoint error (RFC 6749 §5.2)' },
)

export const DeviceAuthorizationRequest = t.Object(
  {
    client_id: t.String({ description: "A registered application's client_id, or platform-cli (the command line)" }),
    scope: t.Optional(t.String({ description: 'Token scopes, space-separated; none: all' })),
  },
  { description: 'Device authorization request (RFC 8628 §3.1), form-encoded or JSON' },
)

export const DeviceAuthorizationResponse = t.Object(
  {
    device_code: t.String({ description: 'What the device polls the token endpoint with' }),
    user_code: t.String({ description: 'What the user types on the verification page, e.g. WDJB-MJHT' }),
    verification_uri: t.String({ description: '<public url>/login/device' }),
    verification_uri_complete: t.String({ description: 'The verification page with the user code filled in' }),
    expires_in: t.Integer({ description: 'Seconds the codes live' }),
    interval: t.Integer({ description: 'Seconds to wait between polls' }),
  },
  { description: 'Device authorization response (RFC 8628 §3.2)' },
)

export const DeviceCodeQuery = t.Object({ user_code: t.String({ description: 'The code the terminal shows' }) })

export const DeviceAnswer = t.Object(
  {
    user_code: t.String({ description: 'The code the terminal shows (any case; dashes and spaces ignored)' }),
    approve: t.Boolean({ description: 'true approves the sign-in, false denies it' }),
  },
  { description: "The signed-in user's answer to a device sign-in" },
)

export const DeviceRequest = t.Object(
  {
    user_code: t.String({ description: 'The code, as the terminal shows it' }),
    client: t.String({ description: 'Who asks: the application, or the platform-api command line' }),
    scopes: t.Array(t.String(), { description: 'Scopes the token would carry' }),
    approved: t.Optional(t.Boolean({ description: 'On an answer: whether it approved' })),
  },
  { description: 'A device sign-in waiting for the user' },
)
