import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

/** Seconds since the epoch, set by SQLite when a row is inserted. */
const createdAt = () => integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`)

/**
 * Users and organizations share one table and one case-insensitive namespace, as in Gitea:
 * `type` 0 is an individual, 1 an organization. `lower_name` carries the uniqueness.
 */
export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    fullName: text('full_name').notNull().default(''),
    email: text('email').notNull().default(''),
    keepEmailPrivate: integer('keep_email_private', { mode: 'boolean' }).notNull().default(false),
    /** argon2id hash; empty for organizations and accounts that only sign in through SSO. */
    passwordHash: text('password_hash').notNull().default(''),
    mustChangePassword: integer('must_change_password', { mode: 'boolean' }).notNull().default(false),
    type: integer('type').notNull().default(0),
    isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
    prohibitLogin: integer('prohibit_login', { mode: 'boolean' }).notNull().default(false),
    allowCreateOrganization: integer('allow_create_organization', { mode: 'boolean' }).notNull().default(true),
    /** 0 public, 1 limited, 2 private (decisions §1). */
    visibility: integer('visibility').notNull().default(0),
    location: text('location').notNull().default(''),
    website: text('website').notNull().default(''),
    description: text('description').notNull().default(''),
    language: text('language').notNull().default(''),
    /** Stored avatar file name under the data dir, or '' for the generated default. */
    avatar: text('avatar').notNull().default(''),
    /** External avatar URL or email chosen by the user. */
    avatarLink: text('avatar_link').notNull().default(''),
    /** The user's saved page size (Pagination setting); 0 = site default. */
    pageSize: integer('page_size').notNull().default(0),
    lastLoginAt: integer('last_login_at', { mode: 'timestamp' }),
    createdAt: createdAt(),
    updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [uniqueIndex('users_lower_name').on(t.lowerName), index('users_type').on(t.type)],
)

/**
 * Personal access tokens. Only a SHA-256 of the token is kept; `token_last_eight` narrows the
 * lookup before a constant-time compare (decisions §1).
 */
export const accessTokens = sqliteTable(
  'access_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull(),
    tokenLastEight: text('token_last_eight').notNull(),
    /** Comma-separated scopes, e.g. `all` or `read:user,write:organization`. */
    scopes: text('scopes').notNull().default('all'),
    /** Unix seconds; null = never expires. */
    expiresAt: integer('expires_at'),
    /**
     * The cluster a kubeconfig's token is limited to (docs/decisions.md §12); null for other tokens.
     * No foreign key: a token whose cluster was removed stays limited to it, so it reaches nothing.
     */
    kubeconfigClusterId: integer('kubeconfig_cluster_id'),
    lastUsedAt: integer('last_used_at'),
    createdAt: createdAt(),
    updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  },
  (t) => [
    uniqueIndex('access_tokens_hash').on(t.tokenHash),
    uniqueIndex('access_tokens_uid_name').on(t.uid, t.name),
    index('access_tokens_last_eight').on(t.tokenLastEight),
  ],
)

/**
 * Server-side sign-in sessions. The cookie carries a random secret; only its SHA-256 is kept.
 * `sid` is the opaque public id shown in session lists, never the cookie value.
 */
export const sessions = sqliteTable(
  'sessions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    sid: text('sid').notNull(),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    secretHash: text('secret_hash').notNull(),
    csrfToken: text('csrf_token').notNull(),
    ip: text('ip').notNull().default(''),
    userAgent: text('user_agent').notNull().default(''),
    createdAt: createdAt(),
    lastSeenAt: integer('last_seen_at').notNull(),
    /** Unix seconds after which the session is dead whatever its activity. */
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [uniqueIndex('sessions_sid').on(t.sid), uniqueIndex('sessions_secret').on(t.secretHash), index('sessions_uid').on(t.uid)],
)

/**
 * Email addresses of individual users, the primary one included (`users.email` mirrors the
 * primary row). `lower_email` makes an address belong to at most one account.
 */
export const emailAddresses = sqliteTable(
  'email_addresses',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    lowerEmail: text('lower_email').notNull(),
    isActivated: integer('is_activated', { mode: 'boolean' }).notNull().default(true),
    isPrimary: integer('is_primary', { mode: 'boolean' }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('email_addresses_lower_email').on(t.lowerEmail), index('email_addresses_uid').on(t.uid)],
)

/** `user_id` follows `follow_id`; both are individual users. */
export const follows = sqliteTable(
  'follows',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    followId: integer('follow_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('follows_pair').on(t.userId, t.followId), index('follows_follow_id').on(t.followId)],
)
