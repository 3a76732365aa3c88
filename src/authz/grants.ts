import type { Executor } from '../storage/database'
import { AppError } from '../errors'
import * as orgStore from '../orgs/store'
import type { TeamRow } from '../orgs/store'
import type { OrgScope } from './authorize'
import { grantedPermissions, roleFromTeams, type PermissionString } from './permissions'

export const Messages = {
  grantExceedsCaller: 'you can only grant or take away permissions you hold yourself',
} as const

/** What membership of a team with `permission` and custom roles holding `customPermissions` gives. */
export function teamGrants(permission: string, customPermissions: readonly string[]): ReadonlySet<PermissionString> {
  return grantedPermissions(roleFromTeams([permission]), customPermissions, false)
}

/** What membership of `team` gives: its permission and the strings of its custom roles. */
export async function grantsOfTeam(db: Executor, team: TeamRow): Promise<ReadonlySet<PermissionString>> {
  const roleIds = (await orgStore.roleIdsOfTeams(db, [team.id])).get(team.id) ?? []
  return teamGrants(team.permission, await orgStore.permissionsOfRoles(db, team.orgId, roleIds))
}

/** Everything `uid` holds in the org through their teams (nothing for a non-member). */
export async function grantsOfMember(db: Executor, orgId: number, uid: number): Promise<ReadonlySet<PermissionString>> {
  const role = roleFromTeams(await orgStore.teamPermissionsOf(db, orgId, uid))
  return grantedPermissions(role, role ? await orgStore.customPermissionsOf(db, orgId, uid) : [], false)
}

/**
 * T32: a caller may grant, or take away, only permissions they hold themselves: making a team,
 * role or membership that gives `grants`, or removing someone who holds them. Throws forbidden.
 */
export function assertHoldsAll(scope: OrgScope, grants: Iterable<string>): void {
  for (const permission of grants)
    if (!scope.permissions.has(permission as PermissionString)) throw new AppError('forbidden', Messages.grantExceedsCaller)
}
