import { VISIBILITY } from '../../../db/schema/codes'
import type { Actor } from '../../authz/actor'
import { Messages as AuthzMessages, type OrgScope, selfOrAdmin } from '../../authz/authorize'
import { assertHoldsAll, teamGrants } from '../../authz/grants'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import type { Page, Paged } from '../../http/pagination'
import type { User } from '../../identity/schemas'
import { presentUser } from '../../identity/service'
import type { UserRow } from '../../identity/store'
import { grantsOfTeam } from '../grants'
import { orgLastMember, requiredMembersStay } from '../rules'
import type { CreateCustomRoleOption, CreateTeamOption, CustomRole, EditTeamOption, Organization, Team } from '../schemas'
import { describeOrg, presentOrgs, writeInOrg } from '../service'
import * as store from '../store'
import { findMemberCandidateByName } from '../system-admin/store'

export const Messages = {
  ownersTeamUndeletable: 'the Owners team cannot be deleted',
  unknownRole: 'role_ids must name custom roles of this organization',
  userNotFound: 'user does not exist',
} as const

function presentTeam(team: store.TeamRow, organization: Organization | null, roleIds: number[]): Team {
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization,
    permission: team.permission as Team['permission'],
    units: JSON.parse(team.units) as string[],
    type: team.permission === 'owner' ? 'owners' : 'custom',
    role_ids: roleIds,
  }
}

async function presentTeams(deps: Deps, rows: { team: store.TeamRow; organization: Organization | null }[]): Promise<Team[]> {
  const roles = await store.roleIdsOfTeams(
    deps.db.read,
    rows.map((r) => r.team.id),
  )
  return rows.map((r) => presentTeam(r.team, r.organization, roles.get(r.team.id) ?? []))
}

/** Teams of the org (organization left null, as Gitea does in this list), Owners first. */
export async function listTeams(deps: Deps, scope: OrgScope, page: Page): Promise<Paged<Team>> {
  const { rows, total } = await store.listTeams(deps.db.read, scope.org.id, page)
  return {
    items: await presentTeams(
      deps,
      rows.map((team) => ({ team, organization: null })),
    ),
    total,
  }
}

/** Every team of the caller across orgs, each with its organization. */
export async function listMyTeams(deps: Deps, actor: Actor, page: Page): Promise<Paged<Team>> {
  const { rows, total } = await store.listTeamsOfUser(deps.db.read, actor.user.id, page)
  const orgs = await presentOrgs(
    deps,
    rows.map((r) => r.org),
  )
  return {
    items: await presentTeams(
      deps,
      rows.map((r, i) => ({ team: r.team, organization: orgs[i] })),
    ),
    total,
  }
}

/** The team of a `teamId` route, with its organization. */
export async function getTeam(deps: Deps, scope: OrgScope): Promise<Team> {
  const team = scope.team!
  const organization = await describeOrg(deps, scope.org)
  return (await presentTeams(deps, [{ team, organization }]))[0]
}

async function assertOwnRoles(deps: Deps, orgId: number, roleIds: readonly number[] | undefined): Promise<void> {
  if (!roleIds || roleIds.length === 0) return
  const known = new Set((await store.listRoles(deps.db.read, orgId)).map((r) => r.id))
  if (roleIds.some((id) => !known.has(id)))
    throw new AppError('invalid', Messages.unknownRole, [{ field: 'role_ids', message: Messages.unknownRole }])
}

/** Throws forbidden unless the caller holds all a team with `permission` and `roleIds` would give. */
async function assertMayGrantTeam(deps: Deps, scope: OrgScope, permission: string, roleIds: readonly number[]): Promise<void> {
  assertHoldsAll(scope, teamGrants(permission, await store.permissionsOfRoles(deps.db.read, scope.org.id, roleIds)))
}

/**
 * Creates a team (permission `read` by default). Throws invalid (foreign role ids), forbidden
 * (the team would give more than the caller holds), duplicate (name), notFound (org deleted meanwhile).
 */
export async function createTeam(deps: Deps, scope: OrgScope, input: CreateTeamOption): Promise<Team> {
  await assertOwnRoles(deps, scope.org.id, input.role_ids)
  const roleIds = [...new Set(input.role_ids ?? [])]
  await assertMayGrantTeam(deps, scope, input.permission ?? 'read', roleIds)
  const team = await writeInOrg(deps, scope, (tx) =>
    store.insertTeam(
      tx,
      {
        orgId: scope.org.id,
        name: input.name,
        lowerName: input.name.toLowerCase(),
        description: input.description ?? '',
        permission: input.permission ?? 'read',
        units: JSON.stringify(input.units ?? []),
      },
      roleIds,
    ),
  )
  const organization = await describeOrg(deps, scope.org)
  return (await presentTeams(deps, [{ team, organization }]))[0]
}

/**
 * Applies the fields present in `input`. The Owners team keeps its name and `owner` permission
 * whatever is sent (Gitea silently does the same). Throws invalid (foreign role ids), forbidden
 * (the team gives, or would give, more than the caller holds), duplicate, notFound (deleted meanwhile).
 */
export async function editTeam(deps: Deps, scope: OrgScope, input: EditTeamOption): Promise<Team> {
  const team = scope.team!
  await assertOwnRoles(deps, scope.org.id, input.role_ids)
  const isOwners = team.permission === 'owner'
  assertHoldsAll(scope, await grantsOfTeam(deps.db.read, team))
  const currentRoleIds = (await store.roleIdsOfTeams(deps.db.read, [team.id])).get(team.id) ?? []
  await assertMayGrantTeam(
    deps,
    scope,
    isOwners ? team.permission : (input.permission ?? team.permission),
    input.role_ids ?? currentRoleIds,
  )
  const changes: Partial<store.NewTeam> = {
    ...(input.name === undefined || isOwners ? {} : { name: input.name, lowerName: input.name.toLowerCase() }),
    ...(input.description === undefined ? {} : { description: input.description }),
    ...(input.permission === undefined || isOwners ? {} : { permission: input.permission }),
    ...(input.units === undefined ? {} : { units: JSON.stringify(input.units) }),
  }
  const roleIds = input.role_ids === undefined ? undefined : [...new Set(input.role_ids)]
  const updated = await deps.db.write((tx) => store.updateTeam(tx, team.id, changes, roleIds))
  if (!updated) throw new AppError('notFound', AuthzMessages.teamNotFound)
  return getTeam(deps, { ...scope, team: updated })
}

/**
 * Deletes a team; its members left in no team of the org stop being members. Throws forbidden
 * (Owners; a team giving more than the caller holds; the only team of a site admin in the
 * administrative org: `requiredMembersStay`).
 */
export async function deleteTeam(deps: Deps, scope: OrgScope): Promise<void> {
  const team = scope.team!
  if (team.permission === 'owner') throw new AppError('forbidden', Messages.ownersTeamUndeletable)
  assertHoldsAll(scope, await grantsOfTeam(deps.db.read, team))
  await deps.db.write(async (tx) => requiredMembersStay(tx, team.orgId, await store.deleteTeam(tx, team, deps.orgDepartures)))
}

export async function listTeamMembers(deps: Deps, scope: OrgScope, actor: Actor, page: Page): Promise<Paged<User>> {
  const { rows, total } = await store.listTeamMembers(deps.db.read, scope.team!.id, page)
  const viewer = { user: actor.user, publicUrl: deps.config.publicUrl }
  return { items: rows.map((u) => presentUser(u, viewer)), total }
}

/**
 * The user `username` as `actor` may name them for the org of `scope`: a private user is unknown
 * (the same 404) to anyone but themself, site admins and the org's own membership lists, so no one
 * can pull a hidden user into an org (and so learn their profile) without consent.
 */
async function userNamed(deps: Deps, actor: Actor, scope: OrgScope, username: string): Promise<UserRow> {
  const user = await findMemberCandidateByName(deps.db.read, scope.org.id, username)
  if (!user) throw new AppError('notFound', Messages.userNotFound)
  const hidden =
    user.visibility === VISIBILITY.private &&
    !selfOrAdmin(actor.user, user) &&
    !(await store.findMembership(deps.db.read, scope.org.id, user.id))
  if (hidden) throw new AppError('notFound', Messages.userNotFound)
  return user
}

/**
 * Adds a user to the team (making them an org member). Idempotent. Throws notFound (user, or a
 * private user hidden from the caller),
 * forbidden (the team gives more than the caller holds: only owners fill Owners), notFound (the
 * team was deleted meanwhile).
 */
export async function addTeamMember(deps: Deps, actor: Actor, scope: OrgScope, username: string): Promise<void> {
  const user = await userNamed(deps, actor, scope, username)
  assertHoldsAll(scope, await grantsOfTeam(deps.db.read, scope.team!))
  if (!(await deps.db.write((tx) => store.addTeamMember(tx, scope.team!, user.id))))
    throw new AppError('notFound', AuthzMessages.teamNotFound)
}

/**
 * Removes a user from the team; a non-member is a no-op. Throws notFound (user), forbidden (the
 * team gives more than the caller holds; a site admin's last team in the administrative org),
 * conflict (the last member of the Owners team but the system admin: `orgLastMember`; the system
 * admin itself: `requiredMembersStay`; checked in the removing transaction so concurrent removals
 * cannot both pass).
 */
export async function removeTeamMember(deps: Deps, actor: Actor, scope: OrgScope, username: string): Promise<void> {
  const team = scope.team!
  const user = await userNamed(deps, actor, scope, username)
  if (!(await store.isTeamMember(deps.db.read, team.id, user.id))) return
  assertHoldsAll(scope, await grantsOfTeam(deps.db.read, team))
  await deps.db.write(async (tx) => {
    if (team.permission === 'owner') await orgLastMember(tx, scope.org.id, user.id)
    await store.removeTeamMember(tx, team, user.id, deps.orgDepartures)
    await requiredMembersStay(tx, scope.org.id, [user.id])
  })
}

const presentRole = (role: store.OrgRoleRow): CustomRole => ({
  id: role.id,
  name: role.name,
  permissions: JSON.parse(role.permissions) as string[],
})

/** The org's custom roles, oldest first. */
export async function listCustomRoles(deps: Deps, scope: OrgScope): Promise<CustomRole[]> {
  return (await store.listRoles(deps.db.read, scope.org.id)).map(presentRole)
}

/**
 * Defines a custom role: a named set of org permission strings for teams to add. Throws
 * forbidden (a string the caller does not hold), duplicate (name), notFound (org deleted meanwhile).
 */
export async function createCustomRole(deps: Deps, scope: OrgScope, input: CreateCustomRoleOption): Promise<CustomRole> {
  assertHoldsAll(scope, input.permissions)
  return presentRole(await writeInOrg(deps, scope, (tx) => store.insertRole(tx, scope.org.id, input.name, [...new Set(input.permissions)])))
}
