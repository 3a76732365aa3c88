import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

const createdAt = () => integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`)

/**
 * TOTP enrollment of a user (at most one). The secret is sealed with the data key because it
 * must be replayed to check codes; the scratch token is only verified, so only its hash is kept
 * ('' once used or never set). `last_used_step` makes each code single-use; `failed_attempts`
 * and `locked_until` (Unix seconds) throttle guessing.
 */
export const twoFactors = sqliteTable(
  'two_factors',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sealedSecret: text('sealed_secret').notNull(),
    scratchHash: text('scratch_hash').notNull().default(''),
    lastUsedStep: integer('last_used_step').notNull().default(0),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    lockedUntil: integer('locked_until').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('two_factors_uid').on(t.uid)],
)

/**
 * A TOTP enrollment that was started (secret shown) but not yet confirmed with a code. Kept apart
 * from `two_factors` so an unconfirmed secret never turns the second factor on.
 */
export const twoFactorEnrollments = sqliteTable(
  'two_factor_enrollments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sealedSecret: text('sealed_secret').notNull(),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    /** Unix seconds after which the secret must be fetched again. */
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [uniqueIndex('two_factor_enrollments_uid').on(t.uid)],
)

/** Registered WebAuthn credentials (security keys). Binary fields are base64url text. */
export const webauthnCredentials = sqliteTable(
  'webauthn_credentials',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    signCount: integer('sign_count').notNull().default(0),
    /** Comma-separated transports the browser reported (usb, nfc, internal, ...). */
    transports: text('transports').notNull().default(''),
    aaguid: text('aaguid').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('webauthn_credentials_credential_id').on(t.credentialId),
    uniqueIndex('webauthn_credentials_uid_name').on(t.uid, t.name),
  ],
)

/** The one pending WebAuthn registration challenge of a user: short-lived and consumed on use. */
export const webauthnChallenges = sqliteTable(
  'webauthn_challenges',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    challenge: text('challenge').notNull(),
    /** The nickname the key gets once registered. */
    name: text('name').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [uniqueIndex('webauthn_challenges_uid').on(t.uid)],
)

/**
 * Links between a local user and an account at an external login source (org SSO; `source_id` is
 * the org's id). An external account is (source, issuer, subject): the issuer is part of the key
 * so that pointing a source at another provider cannot sign its subjects into existing links. The
 * source's provider type and display name are copied here so a link stays listable on its own.
 */
export const externalLoginUsers = sqliteTable(
  'external_login_users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sourceId: integer('source_id').notNull(),
    provider: text('provider').notNull(),
    sourceName: text('source_name').notNull().default(''),
    issuer: text('issuer').notNull().default(''),
    externalId: text('external_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('external_login_users_source_issuer_external').on(t.sourceId, t.issuer, t.externalId),
    uniqueIndex('external_login_users_uid_source').on(t.uid, t.sourceId),
  ],
)

/** OAuth2 client applications owned by a user. Only a SHA-256 of the client secret is kept. */
export const oauth2Applications = sqliteTable(
  'oauth2_applications',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    clientSecretHash: text('client_secret_hash').notNull(),
    /** JSON array of exact redirect URIs. */
    redirectUris: text('redirect_uris').notNull(),
    confidentialClient: integer('confidential_client', { mode: 'boolean' }).notNull().default(true),
    createdAt: createdAt(),
    updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [uniqueIndex('oauth2_applications_client_id').on(t.clientId), index('oauth2_applications_uid').on(t.uid)],
)

/** Authorization codes: hashed, short-lived, single-use (`used_at` set on redemption). */
export const oauth2AuthorizationCodes = sqliteTable(
  'oauth2_authorization_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    applicationId: integer('application_id')
      .notNull()
      .references(() => oauth2Applications.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    scopes: text('scopes').notNull(),
    /** PKCE S256 challenge; '' when the confidential client sent none. */
    codeChallenge: text('code_challenge').notNull().default(''),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('oauth2_authorization_codes_hash').on(t.codeHash)],
)

/**
 * A grant's current access and refresh token, both hashed. Refreshing rotates both in place;
 * `code_id` lets a replayed authorization code revoke what it produced, and a replayed refresh
 * token revokes its grant (OAuth 2.0 Security BCP, refresh token rotation).
 */
export const oauth2Grants = sqliteTable(
  'oauth2_grants',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    applicationId: integer('application_id')
      .notNull()
      .references(() => oauth2Applications.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeId: integer('code_id'),
    scopes: text('scopes').notNull(),
    accessHash: text('access_hash').notNull(),
    accessExpiresAt: integer('access_expires_at').notNull(),
    refreshHash: text('refresh_hash').notNull(),
    refreshExpiresAt: integer('refresh_expires_at').notNull(),
    /** The refresh token this grant's current one replaced: presented again, it betrays a stolen token. */
    previousRefreshHash: text('previous_refresh_hash'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth2_grants_access').on(t.accessHash),
    uniqueIndex('oauth2_grants_refresh').on(t.refreshHash),
    index('oauth2_grants_previous_refresh').on(t.previousRefreshHash),
    index('oauth2_grants_code').on(t.codeId),
  ],
)

/**
 * A device authorization (RFC 8628) from `platform-api login` or a registered application's
 * client: the device code hashed, the user code as shown (`XXXX-XXXX`), and its state: `pending`
 * until a signed-in user approves (`uid` set) or denies it, `redeemed` once its tokens were issued.
 * `application_id` is null for the built-in client `platform-cli`. Times are Unix milliseconds
 * for `last_polled_at` (the `slow_down` check), seconds otherwise.
 */
export const oauth2DeviceAuthorizations = sqliteTable(
  'oauth2_device_authorizations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    clientId: text('client_id').notNull(),
    applicationId: integer('application_id').references(() => oauth2Applications.id, { onDelete: 'cascade' }),
    deviceCodeHash: text('device_code_hash').notNull(),
    userCode: text('user_code').notNull(),
    scopes: text('scopes').notNull(),
    state: text('state').notNull().default('pending'),
    uid: integer('uid').references(() => users.id, { onDelete: 'cascade' }),
    intervalSeconds: integer('interval_seconds').notNull(),
    lastPolledAt: integer('last_polled_at'),
    expiresAt: integer('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oauth2_device_authorizations_device_code').on(t.deviceCodeHash),
    uniqueIndex('oauth2_device_authorizations_user_code').on(t.userCode),
  ],
)
