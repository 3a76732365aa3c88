/**
 * The permission strings of the contract and which roles hold them. Org roles come from teams
 * (docs/decisions.md §2): a member of a team with permission `owner` is an owner, `admin` an admin, any
 * other team makes a plain member. `site-admin` is the site administrator, who holds every org
 * permission in every org (as Gitea's site admins do) and the site-only ones.
 */
export const ORG_PERMISSIONS = [
  'edit:org',
  'delete:org',
  'admin:org',
  'view:avatar',
  'update:avatar',
  'delete:avatar',
  'view:sync-token',
  'create:fleetmgr-org-sync-token',
  'remove:fleetmgr-sync-token',
  'list:access-token',
  'delete:access-token',
  'list:msgbus-token',
  'revoke:msgbus-token',
  // Minting tokens of the org system admin (docs/decisions.md §6a): owners only, like revoking them.
  'create:access-token',
  'create:msgbus-token',
  'view:auth-source',
  'create:auth-source',
  'update:auth-source',
  'delete:auth-source',
  // Not in the contract: who may send usage events for an org (docs/decisions.md §5a: owners and admins).
  'send:usage-events',
  // Not in the contract: who may read the org's audit events (docs/decisions.md §8: owners).
  'view:audit',
] as const
type OrgPermission = (typeof ORG_PERMISSIONS)[number]

/** Permissions that exist only site-wide, never through an org role. */
// `create:org-system-admin` is asked in an org's scope, so an org hidden from the caller stays 404.
const SITE_PERMISSIONS = ['view_usage_analytics:site_admin', 'admin:chart-source', 'create:org-system-admin'] as const
type SitePermission = (typeof SITE_PERMISSIONS)[number]

export type PermissionString = OrgPermission | SitePermission
export const PERMISSION_STRINGS: readonly PermissionString[] = [...ORG_PERMISSIONS, ...SITE_PERMISSIONS]

export type OrgRole = 'owner' | 'admin' | 'member'
export type Role = OrgRole | 'site-admin'
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'site-admin']

/**
 * Role → permission strings. Owners hold everything of their org; admins run it day to day but
 * may not delete it, manage membership (`admin:org`), revoke credentials or change how members
 * sign in; members may see the avatar.
 */
const ROLE_PERMISSIONS = {
  owner: ORG_PERMISSIONS,
  admin: [
    'edit:org',
    'view:avatar',
    'update:avatar',
    'delete:avatar',
    'view:sync-token',
    'list:access-token',
    'list:msgbus-token',
    'view:auth-source',
    'send:usage-events',
  ],
  member: ['view:avatar'],
  'site-admin': PERMISSION_STRINGS,
} as const satisfies Record<Role, readonly PermissionString[]>

/** True when `role` holds `permission` by the table alone (custom roles add more, see `grantedPermissions`). */
export function roleHas(role: Role, permission: PermissionString): boolean {
  return (ROLE_PERMISSIONS[role] as readonly PermissionString[]).includes(permission)
}

/** The team permissions whose members hold at least `role` in the org (the inverse of `roleFromTeams`). */
export function teamPermissionsGranting(role: 'owner' | 'admin'): readonly string[] {
  return role === 'owner' ? ['owner'] : ['owner', 'admin']
}

/** The org role a member gets from the permissions of their teams: the highest one wins. */
export function roleFromTeams(teamPermissions: readonly string[]): OrgRole | undefined {
  if (teamPermissions.length === 0) return undefined
  if (teamPermissions.includes('owner')) return 'owner'
  if (teamPermissions.includes('admin')) return 'admin'
  return 'member'
}

/**
 * Everything a caller may do in an org: their role's strings, the strings of custom roles on
 * their teams (only org permissions: a custom role cannot grant site-wide ones), and all of the
 * site-admin row for site admins.
 */
export function grantedPermissions(
  role: OrgRole | undefined,
  customPermissions: readonly string[],
  siteAdmin: boolean,
): Set<PermissionString> {
  const granted = new Set<PermissionString>()
  if (siteAdmin) for (const p of ROLE_PERMISSIONS['site-admin']) granted.add(p)
  if (role) for (const p of ROLE_PERMISSIONS[role]) granted.add(p)
  if (role) for (const p of customPermissions) if ((ORG_PERMISSIONS as readonly string[]).includes(p)) granted.add(p as PermissionString)
  return granted
}
