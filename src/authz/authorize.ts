import type { Config } from '../config'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { USER_TYPE, type UserRow } from '../identity/store'
import * as orgStore from '../orgs/store'
import type { TeamRow } from '../orgs/store'
import type { Actor } from './actor'
import { grantedPermissions, roleFromTeams, type OrgRole, type PermissionString } from './permissions'

/**
 * What a route requires of its caller:
 * - `public`: anyone; `signed-in`: any valid credential; `site-admin`: a site administrator;
 *   `password`: Basic with the account's real password (the `/users/{u}/tokens*` routes);
 *   `org-creator`: a user who may create organizations (`mayCreateOrgs`);
 * - relations to the org named by the `org` route param (or owning the team of `teamId`):
 *   `org-visible` (anyone who may see the org, anonymous included), `org-member` (a member, or a
 *   site admin), `org-owner` (in the Owners team), `team-member` (in the team, or holding
 *   `admin:org`), `org-subscriber` (an individual user who is a member: inbox subscriptions);
 * - a permission string of the role table (`edit:org`, ...): the caller's org role, custom roles
 *   or site-admin status must grant it.
 */
export type Permission =
  | 'public' | 'signed-in' | 'site-admin' | 'password' | 'org-creator'
  | OrgRelation
  | PermissionString

type OrgRelation = 'org-visible' | 'org-member' | 'org-owner' | 'team-member' | 'org-subscriber'

/** The org a request is about, as the caller relates to it. Handed to handlers as `scope`. */
export interface OrgScope {
  org: UserRow
  /** The caller's role from their teams; undefined for non-members (and anonymous callers). */
  role: OrgRole | undefined
  /** Everything the caller may do here (role table, custom roles, site admin). */
  permissions: ReadonlySet<PermissionString>
  /** The team of a `teamId` route. */
  team: TeamRow | undefined
}

export const Messages = {
  signInRequired: 'sign in required',
  siteAdminRequired: 'site administrator required',
  passwordRequired: 'this route needs Basic authentication with your password',
  orgNotFound: 'organization does not exist',
  teamNotFound: 'team does not exist',
  notOrg: 'the name is not an organization',
  memberRequired: 'Must be an organization member',
  ownerRequired: 'Must be an organization owner',
  teamMemberRequired: 'Must be a team member',
  createOrgNotAllowed: 'Create organization not allowed',
  mustChangePassword: 'You must change your password first: POST /api/v1/user/settings/account/password',
  individualRequired: 'only individual users may subscribe to an organization',
  permissionRequired: (permission: string) => `this needs the "${permission}" permission in the organization`,
} as const

/** What a user flagged `must_change_password` may still do: see who they are, change it, sign out. */
const PASSWORD_CHANGE_PATHS = new Set(['/api/v1/user', '/api/v1/user/signout', '/api/v1/user/settings/account/password'])

/** Throws forbidden when the caller must change their password and `request` is not about that. */
export function assertPasswordCurrent(actor: Actor | undefined, request: Request): void {
  if (actor?.user.mustChangePassword && !PASSWORD_CHANGE_PATHS.has(new URL(request.url).pathname))
    throw new AppError('forbidden', Messages.mustChangePassword)
}

/** Permissions that anonymous callers may pass (public routes, and org routes open to all who may see the org). */
export const ANONYMOUS_PERMISSIONS: readonly Permission[] = ['public', 'org-visible']

export type RouteParams = Record<string, string | undefined>

/**
 * Answers "may this caller use a route requiring `permission`" and loads the org scope for org
 * permissions. Throws unauthenticated (no caller), notFound (org or team unknown or hidden from
 * the caller: never reveal what one may not see), badRequest (`org-subscriber` on a name that is
 * not an org, or names an org hidden from the caller), forbidden (visible but not allowed).
 */
export async function authorize(deps: Deps, actor: Actor | undefined, permission: Permission, params: RouteParams = {}): Promise<OrgScope | undefined> {
  if (permission === 'public') return undefined
  if (permission === 'org-visible') return loadOrgScope(deps, actor, permission, params)
  if (!actor) throw new AppError('unauthenticated', Messages.signInRequired)
  switch (permission) {
    case 'signed-in':
      return undefined
    case 'site-admin':
    case 'view_usage_analytics:site_admin':
    case 'admin:chart-source':
      if (!actor.user.isAdmin) throw new AppError('forbidden', Messages.siteAdminRequired)
      return undefined
    case 'password':
      if (actor.credential !== 'basic-password') throw new AppError('unauthenticated', Messages.passwordRequired)
      return undefined
    case 'org-creator':
      if (!mayCreateOrgs(deps.config, actor.user)) throw new AppError('forbidden', Messages.createOrgNotAllowed)
      return undefined
  }
  if (permission === 'org-subscriber' && actor.user.type !== USER_TYPE.individual)
    throw new AppError('forbidden', Messages.individualRequired)
  return loadOrgScope(deps, actor, permission, params)
}

async function loadOrgScope(deps: Deps, actor: Actor | undefined, permission: OrgRelation | PermissionString, params: RouteParams): Promise<OrgScope> {
  const db = deps.db.read
  let team: TeamRow | undefined
  let org: UserRow | undefined
  if (params.teamId !== undefined) {
    team = /^\d+$/.test(params.teamId) ? await orgStore.findTeamById(db, Number(params.teamId)) : undefined
    if (!team) throw new AppError('notFound', Messages.teamNotFound)
    org = await orgStore.findOrgById(db, team.orgId)
  } else {
    const name = params.org ?? params.orgname ?? ''
    org = await orgStore.findOrgByName(db, name)
    if (!org && permission === 'org-subscriber') throw new AppError('badRequest', Messages.notOrg)
  }
  // What the caller may not see answers exactly as what does not exist (T3): the same error
  // for a hidden org or its team as for an unknown name or team id.
  const hidden = () => team ? new AppError('notFound', Messages.teamNotFound)
    : permission === 'org-subscriber' ? new AppError('badRequest', Messages.notOrg)
    : new AppError('notFound', Messages.orgNotFound)
  if (!org) throw hidden()
  const siteAdmin = actor?.user.isAdmin ?? false
  const uid = actor?.user.id
  const role = uid === undefined ? undefined : roleFromTeams(await orgStore.teamPermissionsOf(db, org.id, uid))
  const custom = uid === undefined || role === undefined ? [] : await orgStore.customPermissionsOf(db, org.id, uid)
  const scope: OrgScope = { org, role, permissions: grantedPermissions(role, custom, siteAdmin), team }
  if (!orgVisibleTo(org, actor, role)) throw hidden()
  if (permission === 'org-visible') return scope
  const isMember = role !== undefined || siteAdmin
  // A team is not shown to outsiders at all: whatever the route asks, a non-member of its org gets
  // the same 404 as for a team id that does not exist (no oracle of team ids).
  if (team && !isMember) throw new AppError('notFound', Messages.teamNotFound)
  switch (permission) {
    case 'org-member':
    case 'org-subscriber':
      if (!isMember) throw new AppError('forbidden', Messages.memberRequired)
      return scope
    case 'org-owner':
      if (role !== 'owner') throw new AppError('forbidden', Messages.ownerRequired)
      return scope
    case 'team-member':
      // Gitea: a team is not shown to outsiders at all; an org member outside the team is refused.
      if (!team || !isMember) throw new AppError('notFound', Messages.teamNotFound)
      if (!scope.permissions.has('admin:org') && !(uid !== undefined && (await orgStore.isTeamMember(db, team.id, uid))))
        throw new AppError('forbidden', Messages.teamMemberRequired)
      return scope
  }
  if (!scope.permissions.has(permission)) throw new AppError('forbidden', Messages.permissionRequired(permission))
  return scope
}

/**
 * Who may create organizations (decisions §2): site admins always; others unless the site turned
 * it off (`allowRegularOrgCreation`) or their own `allowCreateOrganization` flag is off.
 */
export function mayCreateOrgs(config: Config, user: UserRow): boolean {
  return user.isAdmin || (config.allowRegularOrgCreation && user.allowCreateOrganization)
}

/**
 * Gitea's visibility (decisions §1): public orgs to everyone, limited ones to signed-in users,
 * private ones to members and site admins.
 */
export function orgVisibleTo(org: UserRow, actor: Actor | undefined, role: OrgRole | undefined): boolean {
  if (org.visibility === 0) return true
  if (!actor) return false
  if (org.visibility === 1 || actor.user.isAdmin) return true
  return role !== undefined
}

/** Whether the caller may see members who keep their membership private: members and site admins. */
export const seesPrivateMembers = (scope: OrgScope, actor: Actor | undefined): boolean =>
  scope.role !== undefined || (actor?.user.isAdmin ?? false)

