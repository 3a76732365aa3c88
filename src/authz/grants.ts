import { AppError } from '../errors'
import type { OrgScope } from './authorize'
import { grantedPermissions, type PermissionString, roleFromTeams } from './permissions'

export const Messages = {
  grantExceedsCaller: 'you can only grant or take away permissions you hold yourself',
} as const

/** What membership of a team with `permission` and custom roles holding `customPermissions` gives. */
export function teamGrants(permission: string, customPermissions: readonly string[]): ReadonlySet<PermissionString> {
  return grantedPermissions(roleFromTeams([permission]), customPermissions, false)
}

/**
 * T32: a caller may grant, or take away, only permissions they hold themselves: making a team,
 * role or membership that gives `grants`, or removing someone who holds them. Throws forbidden.
 */
export function assertHoldsAll(scope: OrgScope, grants: Iterable<string>): void {
  for (const permission of grants)
    if (!scope.permissions.has(permission as PermissionString)) throw new AppError('forbidden', Messages.grantExceedsCaller)
}
