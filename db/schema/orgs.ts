import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './identity'

const createdAt = () => integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`)

/**
 * What an organization carries beyond its `users` row (type 1): who created it, through which
 * flow, and the fleet-manager endpoint of fleet-manager-origin orgs. One row per org.
 */
export const orgDetails = sqliteTable('org_details', {
  orgId: integer('org_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** The creating user; null once that user is deleted. */
  createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
  /** The creator was a site admin at creation time: the oldest such org is the administrative org. */
  createdBySiteAdmin: integer('created_by_site_admin', { mode: 'boolean' }).notNull().default(false),
  /** `api` (POST /orgs), `settings` (web form), `marketplace` (claimable standalone org). */
  origin: text('origin').notNull().default('api'),
  fleetmgrEndpoint: text('fleetmgr_endpoint').notNull().default(''),
  createdAt: createdAt(),
})

/** Org membership; a member belongs to at least one team. `is_public` = shown in public member lists. */
export const orgUsers = sqliteTable(
  'org_users',
  {
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    isPublic: integer('is_public', { mode: 'boolean' }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.uid] }), index('org_users_uid').on(t.uid)],
)

/**
 * Teams of an org. `permission` is `owner` (the Owners team only), `admin`, `write`, `read` or
 * `none`; the org role of a member is the highest permission among their teams.
 */
export const teams = sqliteTable(
  'teams',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    description: text('description').notNull().default(''),
    permission: text('permission').notNull(),
    /** JSON array of enabled unit keys. */
    units: text('units').notNull().default('[]'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('teams_org_lower_name').on(t.orgId, t.lowerName)],
)

export const teamUsers = sqliteTable(
  'team_users',
  {
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.uid] }), index('team_users_org_uid').on(t.orgId, t.uid)],
)

/** Custom roles of an org: named sets of permission strings that teams add to their members' role. */
export const orgRoles = sqliteTable(
  'org_roles',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** JSON array of permission strings from the authz table. */
    permissions: text('permissions').notNull().default('[]'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('org_roles_org_name').on(t.orgId, t.name)],
)

export const teamRoles = sqliteTable(
  'team_roles',
  {
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    roleId: integer('role_id')
      .notNull()
      .references(() => orgRoles.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.roleId] })],
)

/**
 * Claimable standalone orgs made by the marketplace flow. `claim_id` is the opaque id handed to
 * the buyer; claiming makes the caller an owner and records who and when.
 */
export const orgClaims = sqliteTable(
  'org_claims',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    claimId: text('claim_id').notNull(),
    claimedBy: integer('claimed_by').references(() => users.id, { onDelete: 'set null' }),
    claimedAt: integer('claimed_at', { mode: 'timestamp' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('org_claims_claim_id').on(t.claimId), uniqueIndex('org_claims_org').on(t.orgId)],
)

/** The org's system admin (decisions §6a): a bot user holding the org's service tokens. One per org. */
export const orgSystemAdmins = sqliteTable(
  'org_system_admins',
  {
    orgId: integer('org_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('org_system_admins_uid').on(t.uid)],
)

/**
 * The fleet-manager sync token of an org (decisions §6a): `accessKeyID` in the clear, the secret
 * sealed with the secret box (it is shown again to holders of `view:sync-token`).
 */
export const fleetmgrSyncTokens = sqliteTable('fleetmgr_sync_tokens', {
  orgId: integer('org_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** The user the token acts for: the org's system admin, else whoever minted it. */
  userId: integer('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull().default(''),
  accessKeyId: text('access_key_id').notNull(),
  sealedSecret: text('sealed_secret').notNull(),
  createdAt: createdAt(),
})
