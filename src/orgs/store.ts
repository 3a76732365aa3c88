import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import { USER_TYPE, VISIBILITY } from '../../db/schema/codes'
import { orgClaims, orgDetails, orgRoles, orgSystemAdmins, orgUsers, teamRoles, teams, teamUsers } from '../../db/schema/orgs'
import type { OrgDepartures } from '../deps'
import { AppError } from '../errors'
import { accountRow, accounts, deleteUser, insertUser, type NewUser, type UserRow } from '../identity/store'
import type { Executor } from '../storage/database'
import { isUniqueViolation } from '../storage/database'

export type OrgDetailsRow = typeof orgDetails.$inferSelect
export type TeamRow = typeof teams.$inferSelect
export type NewTeam = typeof teams.$inferInsert
export type OrgRoleRow = typeof orgRoles.$inferSelect
export type ClaimRow = typeof orgClaims.$inferSelect

export const OWNERS_TEAM = 'Owners'
export const Messages = {
  teamExists: 'team already exists',
  roleExists: 'role already exists',
} as const

export interface PageWindow {
  limit: number
  offset: number
}

/** An organization by name, case-insensitively (undefined for users and unknown names). */
export async function findOrgByName(db: Executor, name: string): Promise<UserRow | undefined> {
  return db
    .select()
    .from(accounts)
    .where(and(eq(accounts.lowerName, name.toLowerCase()), eq(accounts.type, USER_TYPE.organization)))
    .get()
}

export async function findOrgById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db
    .select()
    .from(accounts)
    .where(and(eq(accounts.id, id), eq(accounts.type, USER_TYPE.organization)))
    .get()
}

export async function findOrgDetails(db: Executor, orgId: number): Promise<OrgDetailsRow | undefined> {
  return db.select().from(orgDetails).where(eq(orgDetails.orgId, orgId)).get()
}

/**
 * One write unit: the org's account row, its details, the Owners team with `ownerId` in it, and
 * that owner's (private) membership. A taken name is `duplicate`.
 */
export async function insertOrgWithOwner(
  tx: Executor,
  org: NewUser,
  details: Omit<typeof orgDetails.$inferInsert, 'orgId'>,
  ownerId: number | undefined,
): Promise<UserRow> {
  const row = await insertUser(tx, { ...org, type: USER_TYPE.organization })
  await tx.insert(orgDetails).values({ ...details, orgId: row.id })
  const [owners] = await tx
    .insert(teams)
    .values({ orgId: row.id, name: OWNERS_TEAM, lowerName: OWNERS_TEAM.toLowerCase(), permission: 'owner' })
    .returning()
  // A marketplace org waits for its buyer: its Owners team stays empty until the claim.
  if (ownerId !== undefined) await addTeamMember(tx, owners, ownerId)
  return row
}

export async function updateOrgDetails(tx: Executor, orgId: number, changes: Partial<typeof orgDetails.$inferInsert>): Promise<void> {
  await tx.update(orgDetails).set(changes).where(eq(orgDetails.orgId, orgId))
}

/** Removes the org and everything that hangs off it, in one write unit (other areas' rows: `departures`). */
export async function deleteOrg(tx: Executor, orgId: number, departures: OrgDepartures): Promise<void> {
  const teamIds = (await tx.select({ id: teams.id }).from(teams).where(eq(teams.orgId, orgId)).all()).map((r) => r.id)
  if (teamIds.length > 0) await tx.delete(teamRoles).where(inArray(teamRoles.teamId, teamIds))
  await tx.delete(teamUsers).where(eq(teamUsers.orgId, orgId))
  await tx.delete(teams).where(eq(teams.orgId, orgId))
  await tx.delete(orgRoles).where(eq(orgRoles.orgId, orgId))
  await tx.delete(orgUsers).where(eq(orgUsers.orgId, orgId))
  await tx.delete(orgClaims).where(eq(orgClaims.orgId, orgId))
  await tx.delete(orgDetails).where(eq(orgDetails.orgId, orgId))
  await departures.orgDeleted(tx, orgId)
  // The org's system admin exists only for the org: its bot user (and with it its tokens) goes too.
  const systemAdmin = await tx.select({ uid: orgSystemAdmins.uid }).from(orgSystemAdmins).where(eq(orgSystemAdmins.orgId, orgId)).get()
  if (systemAdmin) await deleteUser(tx, systemAdmin.uid)
  await deleteUser(tx, orgId)
}

/** The permissions of the teams `uid` belongs to in the org ([] for a non-member). */
export async function teamPermissionsOf(db: Executor, orgId: number, uid: number): Promise<string[]> {
  const rows = await db
    .select({ permission: teams.permission })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
    .all()
  return rows.map((r) => r.permission)
}

/** The permission strings of the custom roles on the teams `uid` belongs to in the org. */
export async function customPermissionsOf(db: Executor, orgId: number, uid: number): Promise<string[]> {
  const rows = await db
    .select({ permissions: orgRoles.permissions })
    .from(teamUsers)
    .innerJoin(teamRoles, eq(teamRoles.teamId, teamUsers.teamId))
    .innerJoin(orgRoles, eq(orgRoles.id, teamRoles.roleId))
    .where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
    .all()
  return rows.flatMap((r) => JSON.parse(r.permissions) as string[])
}

export async function findMembership(db: Executor, orgId: number, uid: number) {
  return db
    .select()
    .from(orgUsers)
    .where(and(eq(orgUsers.orgId, orgId), eq(orgUsers.uid, uid)))
    .get()
}

/** Ids of the members on a team of the org with one of `teamPermissions` (`owner`: the Owners team). */
export async function memberIdsWith(db: Executor, orgId: number, teamPermissions: readonly string[]): Promise<number[]> {
  const rows = await db
    .selectDistinct({ uid: teamUsers.uid })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(and(eq(teamUsers.orgId, orgId), inArray(teams.permission, [...teamPermissions])))
    .all()
  return rows.map((r) => r.uid)
}

/** Ids of the members of the org's Owners team. */
export const ownerIds = (db: Executor, orgId: number): Promise<number[]> => memberIdsWith(db, orgId, ['owner'])

/** Members of the org, by name; `publicOnly` limits to publicized memberships. */
export async function listMembers(
  db: Executor,
  orgId: number,
  publicOnly: boolean,
  page: PageWindow,
): Promise<{ rows: UserRow[]; total: number }> {
  const where = publicOnly ? and(eq(orgUsers.orgId, orgId), eq(orgUsers.isPublic, true)) : eq(orgUsers.orgId, orgId)
  const rows = await db
    .select({ user: accountRow })
    .from(orgUsers)
    .innerJoin(accounts, eq(accounts.id, orgUsers.uid))
    .where(where)
    .orderBy(asc(accounts.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(orgUsers).where(where).get()
  return { rows: rows.map((r) => r.user), total: count?.n ?? 0 }
}

export async function setMembershipPublic(tx: Executor, orgId: number, uid: number, isPublic: boolean): Promise<void> {
  await tx
    .update(orgUsers)
    .set({ isPublic })
    .where(and(eq(orgUsers.orgId, orgId), eq(orgUsers.uid, uid)))
}

/** Drops `uid` from the org: the membership, every team of the org and the org subscription, one write unit. */
export async function deleteMembership(tx: Executor, orgId: number, uid: number, departures: OrgDepartures): Promise<void> {
  await tx.delete(teamUsers).where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
  await dropMembershipWithoutTeams(tx, orgId, uid, departures)
}

/**
 * Orgs `uid` belongs to, by name. `visibleTo`: `all` for the member themself and site admins;
 * `public` keeps public memberships of public orgs only (what others may see).
 */
export async function listOrgsOfUser(
  db: Executor,
  uid: number,
  visibleTo: 'all' | 'public',
  page: PageWindow,
): Promise<{ rows: UserRow[]; total: number }> {
  const where =
    visibleTo === 'all'
      ? eq(orgUsers.uid, uid)
      : and(eq(orgUsers.uid, uid), eq(orgUsers.isPublic, true), eq(accounts.visibility, VISIBILITY.public))
  const rows = await db
    .select({ org: accountRow })
    .from(orgUsers)
    .innerJoin(accounts, eq(accounts.id, orgUsers.orgId))
    .where(where)
    .orderBy(asc(accounts.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const count = await db
    .select({ n: sql<number>`count(*)` })
    .from(orgUsers)
    .innerJoin(accounts, eq(accounts.id, orgUsers.orgId))
    .where(where)
    .get()
  return { rows: rows.map((r) => r.org), total: count?.n ?? 0 }
}

// Teams

export async function findTeamByName(db: Executor, orgId: number, name: string): Promise<TeamRow | undefined> {
  return db
    .select()
    .from(teams)
    .where(and(eq(teams.orgId, orgId), eq(teams.lowerName, name.toLowerCase())))
    .get()
}

export async function findTeamById(db: Executor, id: number): Promise<TeamRow | undefined> {
  return db.select().from(teams).where(eq(teams.id, id)).get()
}

/** Teams of the org, the Owners team first, then by name. */
export async function listTeams(db: Executor, orgId: number, page: PageWindow): Promise<{ rows: TeamRow[]; total: number }> {
  const rows = await db
    .select()
    .from(teams)
    .where(eq(teams.orgId, orgId))
    .orderBy(sql`${teams.permission} = 'owner' desc`, asc(teams.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(teams).where(eq(teams.orgId, orgId)).get()
  return { rows, total: count?.n ?? 0 }
}

/** Teams `uid` belongs to across all orgs, with their org rows. */
export async function listTeamsOfUser(
  db: Executor,
  uid: number,
  page: PageWindow,
): Promise<{ rows: { team: TeamRow; org: UserRow }[]; total: number }> {
  const rows = await db
    .select({ team: teams, org: accountRow })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .innerJoin(accounts, eq(accounts.id, teams.orgId))
    .where(eq(teamUsers.uid, uid))
    .orderBy(asc(accounts.lowerName), asc(teams.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(teamUsers).where(eq(teamUsers.uid, uid)).get()
  return { rows, total: count?.n ?? 0 }
}

/** Inserts a team with its custom roles; a name taken in the org is `duplicate`. */
export async function insertTeam(tx: Executor, team: NewTeam, roleIds: readonly number[]): Promise<TeamRow> {
  try {
    const [row] = await tx.insert(teams).values(team).returning()
    if (roleIds.length > 0) await tx.insert(teamRoles).values(roleIds.map((roleId) => ({ teamId: row.id, roleId })))
    return row
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', Messages.teamExists, [{ field: 'name', message: Messages.teamExists }]) : e
  }
}

/**
 * Updates a team; `roleIds` replaces its custom roles when given. A taken name is `duplicate`.
 * Undefined (nothing written) when the team is gone.
 */
export async function updateTeam(
  tx: Executor,
  id: number,
  changes: Partial<NewTeam>,
  roleIds: readonly number[] | undefined,
): Promise<TeamRow | undefined> {
  try {
    const [row] =
      Object.keys(changes).length > 0
        ? await tx.update(teams).set(changes).where(eq(teams.id, id)).returning()
        : await tx.select().from(teams).where(eq(teams.id, id)).all()
    if (!row) return undefined
    if (roleIds) {
      await tx.delete(teamRoles).where(eq(teamRoles.teamId, id))
      if (roleIds.length > 0) await tx.insert(teamRoles).values(roleIds.map((roleId) => ({ teamId: id, roleId })))
    }
    return row
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', Messages.teamExists, [{ field: 'name', message: Messages.teamExists }]) : e
  }
}

/** Deletes a team; members left in no team of the org stop being members. One write unit. Returns the team's member ids. */
export async function deleteTeam(tx: Executor, team: TeamRow, departures: OrgDepartures): Promise<number[]> {
  const memberIds = (await tx.select({ uid: teamUsers.uid }).from(teamUsers).where(eq(teamUsers.teamId, team.id)).all()).map((r) => r.uid)
  await tx.delete(teamRoles).where(eq(teamRoles.teamId, team.id))
  await tx.delete(teamUsers).where(eq(teamUsers.teamId, team.id))
  await tx.delete(teams).where(eq(teams.id, team.id))
  for (const uid of memberIds) await dropMembershipWithoutTeams(tx, team.orgId, uid, departures)
  return memberIds
}

/** A user in no team of the org is no member of it: the membership goes, and what other areas keep for it (`departures`). */
async function dropMembershipWithoutTeams(tx: Executor, orgId: number, uid: number, departures: OrgDepartures): Promise<void> {
  const left = await tx
    .select({ teamId: teamUsers.teamId })
    .from(teamUsers)
    .where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
    .get()
  if (left) return
  await tx.delete(orgUsers).where(and(eq(orgUsers.orgId, orgId), eq(orgUsers.uid, uid)))
  await departures.memberLeft(tx, orgId, uid)
}

export async function roleIdsOfTeams(db: Executor, teamIds: readonly number[]): Promise<Map<number, number[]>> {
  const byTeam = new Map<number, number[]>(teamIds.map((id) => [id, []]))
  if (teamIds.length === 0) return byTeam
  const rows = await db
    .select()
    .from(teamRoles)
    .where(inArray(teamRoles.teamId, [...teamIds]))
    .orderBy(asc(teamRoles.roleId))
    .all()
  for (const r of rows) byTeam.get(r.teamId)?.push(r.roleId)
  return byTeam
}

/**
 * The teams `uid` is on, with their permissions, as a subquery another area joins its own rows to
 * (a cluster's team grants) in one statement; SQLite flattens it into the outer query.
 */
export const teamsOfUser = (uid: number) =>
  new QueryBuilder()
    .select({ id: teams.id, name: teams.name, permission: teams.permission })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(eq(teamUsers.uid, uid))
    .as('teams_of_user')

/** The org's teams with their permissions, as a subquery another area joins its own rows to (the teams granted a cluster). */
export const teamsOfOrg = (orgId: number) =>
  new QueryBuilder()
    .select({ id: teams.id, name: teams.name, lowerName: teams.lowerName, permission: teams.permission })
    .from(teams)
    .where(eq(teams.orgId, orgId))
    .as('teams_of_org')

export async function isTeamMember(db: Executor, teamId: number, uid: number): Promise<boolean> {
  return (
    (await db
      .select({ uid: teamUsers.uid })
      .from(teamUsers)
      .where(and(eq(teamUsers.teamId, teamId), eq(teamUsers.uid, uid)))
      .get()) !== undefined
  )
}

export async function listTeamMembers(db: Executor, teamId: number, page: PageWindow): Promise<{ rows: UserRow[]; total: number }> {
  const rows = await db
    .select({ user: accountRow })
    .from(teamUsers)
    .innerJoin(accounts, eq(accounts.id, teamUsers.uid))
    .where(eq(teamUsers.teamId, teamId))
    .orderBy(asc(accounts.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  const count = await db.select({ n: sql<number>`count(*)` }).from(teamUsers).where(eq(teamUsers.teamId, teamId)).get()
  return { rows: rows.map((r) => r.user), total: count?.n ?? 0 }
}

/**
 * Adds `uid` to the team and, when new to the org, makes them a (private) member. Idempotent.
 * False (nothing written) when the team is gone, e.g. deleted by a concurrent request.
 */
export async function addTeamMember(tx: Executor, team: TeamRow, uid: number): Promise<boolean> {
  if (!(await findTeamById(tx, team.id))) return false
  await tx.insert(teamUsers).values({ teamId: team.id, orgId: team.orgId, uid }).onConflictDoNothing()
  await tx.insert(orgUsers).values({ orgId: team.orgId, uid, isPublic: false }).onConflictDoNothing()
  return true
}

/** Removes `uid` from the team; left in no team of the org, they stop being a member. */
export async function removeTeamMember(tx: Executor, team: TeamRow, uid: number, departures: OrgDepartures): Promise<void> {
  await tx.delete(teamUsers).where(and(eq(teamUsers.teamId, team.id), eq(teamUsers.uid, uid)))
  await dropMembershipWithoutTeams(tx, team.orgId, uid, departures)
}

// Custom roles

export async function listRoles(db: Executor, orgId: number): Promise<OrgRoleRow[]> {
  return db.select().from(orgRoles).where(eq(orgRoles.orgId, orgId)).orderBy(asc(orgRoles.id)).all()
}

/** The permission strings of the org's custom roles among `roleIds` (others are ignored). */
export async function permissionsOfRoles(db: Executor, orgId: number, roleIds: readonly number[]): Promise<string[]> {
  if (roleIds.length === 0) return []
  const rows = await db
    .select({ permissions: orgRoles.permissions })
    .from(orgRoles)
    .where(and(eq(orgRoles.orgId, orgId), inArray(orgRoles.id, [...roleIds])))
    .all()
  return rows.flatMap((r) => JSON.parse(r.permissions) as string[])
}

export async function insertRole(tx: Executor, orgId: number, name: string, permissions: readonly string[]): Promise<OrgRoleRow> {
  try {
    const [row] = await tx
      .insert(orgRoles)
      .values({ orgId, name, permissions: JSON.stringify(permissions) })
      .returning()
    return row
  } catch (e) {
    throw isUniqueViolation(e) ? new AppError('duplicate', Messages.roleExists, [{ field: 'name', message: Messages.roleExists }]) : e
  }
}

// Claims

export async function insertClaim(tx: Executor, orgId: number, claimId: string): Promise<ClaimRow> {
  const [row] = await tx.insert(orgClaims).values({ orgId, claimId }).returning()
  return row
}

export async function findClaim(db: Executor, claimId: string): Promise<ClaimRow | undefined> {
  return db.select().from(orgClaims).where(eq(orgClaims.claimId, claimId)).get()
}

/** The oldest unclaimed claim whose org came from the marketplace flow. */
export async function oldestUnclaimedMarketplaceClaim(db: Executor): Promise<ClaimRow | undefined> {
  const row = await db
    .select({ claim: orgClaims })
    .from(orgClaims)
    .innerJoin(orgDetails, eq(orgDetails.orgId, orgClaims.orgId))
    .where(and(isNull(orgClaims.claimedBy), eq(orgDetails.origin, 'marketplace')))
    .orderBy(asc(orgClaims.createdAt), asc(orgClaims.id))
    .get()
  return row?.claim
}

/** Marks the claim taken by `uid` and adds them to the Owners team, unless someone was first. */
export async function takeClaim(tx: Executor, claim: ClaimRow, uid: number): Promise<boolean> {
  const taken = await tx
    .update(orgClaims)
    .set({ claimedBy: uid, claimedAt: new Date() })
    .where(and(eq(orgClaims.id, claim.id), isNull(orgClaims.claimedAt)))
    .returning()
  if (taken.length === 0) return false
  const owners = await tx
    .select()
    .from(teams)
    .where(and(eq(teams.orgId, claim.orgId), eq(teams.permission, 'owner')))
    .get()
  if (owners) await addTeamMember(tx, owners, uid)
  return true
}

/** The oldest org created by a site admin (the administrative org when none is configured). */
export async function oldestOrgOfSiteAdmin(db: Executor): Promise<number | undefined> {
  const row = await db
    .select({ orgId: orgDetails.orgId })
    .from(orgDetails)
    .where(eq(orgDetails.createdBySiteAdmin, true))
    .orderBy(asc(orgDetails.createdAt), asc(orgDetails.orgId))
    .get()
  return row?.orgId
}

/** The orgs where `uid` is on a team with one of `teamPermissions`, all of them, by name. */
export async function orgsWhereMemberOfTeams(db: Executor, uid: number, teamPermissions: readonly string[]): Promise<UserRow[]> {
  const rows = await db
    .selectDistinct({ org: accountRow })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .innerJoin(accounts, eq(accounts.id, teamUsers.orgId))
    .where(and(eq(teamUsers.uid, uid), inArray(teams.permission, [...teamPermissions])))
    .orderBy(asc(accounts.lowerName))
    .all()
  return rows.map((r) => r.org)
}

/** Ids of the orgs whose Owners team has `uid` as its only member (account deletion asks). */
export async function orgIdsOwnedSolelyBy(db: Executor, uid: number): Promise<number[]> {
  const rows = await db
    .select({ orgId: teams.orgId })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(eq(teams.permission, 'owner'))
    .groupBy(teams.orgId)
    .having(sql`count(*) = 1 and max(${teamUsers.uid}) = ${uid}`)
    .all()
  return rows.map((r) => r.orgId)
}
