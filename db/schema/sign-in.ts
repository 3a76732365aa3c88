import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

/**
 * The sign-in limiter's state (src/identity/limiter), shared by every process on the database and
 * kept across restarts. Accounts are the limiter's account keys (`user:<id>`, or `login:<name>`
 * for a name that is no user); addresses are client addresses ('' for the command line).
 */

/**
 * Failed password attempts in the current fixed window, per `kind`: `account` (address ''),
 * `pair` (account and address) or `address` (account ''). Times in milliseconds since the epoch.
 */
export const signInFailures = sqliteTable(
  'sign_in_failures',
  {
    kind: text('kind', { enum: ['account', 'pair', 'address'] }).notNull(),
    account: text('account').notNull(),
    address: text('address').notNull(),
    failures: integer('failures').notNull(),
    resetsAtMs: integer('resets_at_ms').notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.account, t.address] }), index('sign_in_failures_resets_at').on(t.resetsAtMs)],
)

/**
 * Password checks in flight: taken before hashing, removed with the verdict. Until then they hold
 * their place under the limits, so parallel guesses on any process never hash more than the limit.
 * One whose process died runs out at `expires_at_ms`.
 */
export const signInAttempts = sqliteTable(
  'sign_in_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    account: text('account').notNull(),
    address: text('address').notNull(),
    expiresAtMs: integer('expires_at_ms').notNull(),
  },
  (t) => [index('sign_in_attempts_account').on(t.account, t.address), index('sign_in_attempts_address').on(t.address)],
)

/** Addresses an account proved its password from: exempt from the account-wide limit until `until_ms`. */
export const signInKnownAddresses = sqliteTable(
  'sign_in_known_addresses',
  {
    account: text('account').notNull(),
    address: text('address').notNull(),
    untilMs: integer('until_ms').notNull(),
  },
  (t) => [primaryKey({ columns: [t.account, t.address] }), index('sign_in_known_addresses_until').on(t.untilMs)],
)

/**
 * Sign-ins whose password was right, waiting for the second factor (src/identity/signin/tickets.ts).
 * The ticket is a bearer secret in a cookie: only its SHA-256 is kept.
 */
export const signInTickets = sqliteTable(
  'sign_in_tickets',
  {
    idHash: text('id_hash').primaryKey(),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    remember: integer('remember', { mode: 'boolean' }).notNull(),
    /** Milliseconds since the epoch. */
    expiresAtMs: integer('expires_at_ms').notNull(),
    /** Wrong second factors so far. */
    failures: integer('failures').notNull().default(0),
    /** The WebAuthn challenge last requested for this sign-in; answers once. */
    challenge: text('challenge'),
  },
  (t) => [index('sign_in_tickets_expires_at').on(t.expiresAtMs), index('sign_in_tickets_uid').on(t.uid)],
)
