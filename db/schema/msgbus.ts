import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * The message bus's trust chain (decisions §6a): the operator, the system account `SYS`, the
 * `USERS` account and one `ORG_<orgID>` account per organization, made on first need. Seeds are
 * sealed with the secret box; accounts other than SYS sign their users with a separate signing key.
 */
export const msgbusKeys = sqliteTable('msgbus_keys', {
  /** `operator`, `SYS`, `USERS` or `ORG_<orgID>`. */
  name: text('name').primaryKey(),
  publicKey: text('public_key').notNull(),
  sealedSeed: text('sealed_seed').notNull(),
  /** Empty for the operator and SYS. */
  signingPublicKey: text('signing_public_key').notNull().default(''),
  sealedSigningSeed: text('sealed_signing_seed').notNull().default(''),
  createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
})

/**
 * One issued NATS user key (the spec's MsgbusAccount). The seed is never kept: every credential
 * is a new key, so a revoked key is never signed again (revocation is by key and time). Rows
 * outlive their user (no foreign key): a deleted user's keys stay revoked, and their live ones
 * are revoked by the next account push, instead of vanishing from the revocation list.
 */
export const msgbusAccounts = sqliteTable(
  'msgbus_accounts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid').notNull(),
    /** `user`, `admin`, `cluster-resource-history`, `org` or `cluster`. */
    accountType: text('account_type').notNull(),
    msgbusPubKey: text('msgbus_pub_key').notNull(),
    /** Name of the NATS account (a `msgbus_keys` row) the key lives in. */
    account: text('account').notNull(),
    clusterId: text('cluster_id').notNull().default(''),
    productName: text('product_name').notNull().default(''),
    /** Unix seconds: the user JWT's `iat` and `exp`. */
    issuedAt: integer('issued_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    /** Unix seconds; null while live. */
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('msgbus_accounts_uid').on(t.uid), index('msgbus_accounts_account').on(t.account)],
)
