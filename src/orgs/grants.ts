import { teamGrants } from '../authz/grants'
import { grantedPermissions, type OrgRole, type PermissionString, roleFromTeams, teamPermissionsGranting } from '../authz/permissions'
import type { UserRow } from '../identity/store'
import type { Executor } from '../storage/database'
import type { TeamRow } from './store'
import * as orgStore from './store'

/** What membership of `team` gives: its permission and the strings of its custom roles. */
export async function grantsOfTeam(db: Executor, team: TeamRow): Promise<ReadonlySet<PermissionString>> {
  const roleIds = (await orgStore.roleIdsOfTeams(db, [team.id])).get(team.id) ?? []
  return teamGrants(team.permission, await orgStore.permissionsOfRoles(db, team.orgId, roleIds))
}

/** The role `uid` has in the org from their teams (the highest wins); undefined for a non-member. */
export async function orgRoleOf(db: Executor, orgId: number, uid: number): Promise<OrgRole | undefined> {
  return roleFromTeams(await orgStore.teamPermissionsOf(db, orgId, uid))
}

/** Every org where `uid` holds at least `role` through their teams (no page: reports and lists need them all). */
export async function orgsWhereRoleAtLeast(db: Executor, uid: number, role: 'owner' | 'admin'): Promise<UserRow[]> {
  return orgStore.orgsWhereMemberOfTeams(db, uid, teamPermissionsGranting(role))
}

/** Everything `uid` holds in the org through their teams (nothing for a non-member). */
export async function grantsOfMember(db: Executor, orgId: number, uid: number): Promise<ReadonlySet<PermissionString>> {
  const role = await orgRoleOf(db, orgId, uid)
  return grantedPermissions(role, role ? await orgStore.customPermissionsOf(db, orgId, uid) : [], false)
}
