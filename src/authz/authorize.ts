import { USER_TYPE, VISIBILITY } from '../../db/schema/codes'
import type { users } from '../../db/schema/identity'
import type { teams } from '../../db/schema/orgs'
import type { Config } from '../config'
import { AppError } from '../errors'
import type { Actor } from './actor'
import { grantedPermissions, type OrgRole, type PermissionString } from './permissions'

/**
 * What a route requires of its caller, in five kinds (each its own guard macro, since each hands
 * the handler something different):
 * - `public`: anyone; the handler reads the optional `actor`;
 * - `org-visible`: anyone who may see the org named by the `org` param (anonymous included); the
 *   handler gets the org as `scope`;
 * - signed-in permissions (`SignedInPermission`): `signed-in` (any valid credential),
 *   `site-admin` (a site administrator), `org-creator` (a user who may create organizations,
 *   `mayCreateOrgs`) and the site-only permission strings; the handler gets `me`;
 * - `self-or-admin` (`UserPermission`): the user named by the `username` param themself, or a site
 *   administrator; the handler gets `me` and that user as `target`;
 * - org permissions (`OrgPermission`), relations to the org named by the `org` param (or owning
 *   the team of `teamId`): `org-viewer` (a signed-in caller who may see the org, member or not),
 *   `org-member` (a member, or a site admin), `org-owner` (in the Owners
 *   team), `team-member` (in the team, or holding `admin:org`), `org-subscriber` (an individual
 *   user who is a member: inbox subscriptions), or a permission string of the role table
 *   (`edit:org`, ...) that the caller's org role, custom roles or site-admin status must grant;
 *   the handler gets `me` and the org as `scope`.
 */
type UserRow = typeof users.$inferSelect
/** The user a `self-or-admin` route names in its path, handed to the handler as `target`. */
export type TargetUser = UserRow
type TeamRow = typeof teams.$inferSelect

/**
 * The org facts a scope is loaded from, asked of the read side. authz declares what it needs;
 * `orgs/scope-facts.ts` answers it, and Deps hands it over (so authz imports no area).
 */
export interface OrgFacts {
  findOrgByName(name: string): Promise<UserRow | undefined>
  findOrgById(id: number): Promise<UserRow | undefined>
  findTeamById(id: number): Promise<TeamRow | undefined>
  /** The role of `uid` in the org from their teams (the highest wins); undefined for a non-member. */
  orgRoleOf(orgId: number, uid: number): Promise<OrgRole | undefined>
  /** The permission strings of the custom roles on the teams of `uid` in the org. */
  customPermissionsOf(orgId: number, uid: number): Promise<string[]>
  isTeamMember(teamId: number, uid: number): Promise<boolean>
}

/** The user facts a `self-or-admin` target is loaded from (`identity/user-facts.ts`, through Deps). */
export interface UserFacts {
  /** The individual user `name` (case-insensitive), whatever their visibility. */
  findUserByName(name: string): Promise<UserRow | undefined>
}

/** What `authorize` reads beside the caller: the site's settings and the org and user facts. */
export interface AuthzContext {
  config: Config
  orgFacts: OrgFacts
  userFacts: UserFacts
}

export type SignedInPermission = 'signed-in' | 'site-admin' | 'org-creator' | 'view_usage_analytics:site_admin' | 'admin:chart-source'
export type UserPermission = 'self-or-admin'
type OrgRelation = 'org-viewer' | 'org-member' | 'org-owner' | 'team-member' | 'org-subscriber'
export type OrgPermission = OrgRelation | Exclude<PermissionString, 'view_usage_analytics:site_admin' | 'admin:chart-source'>
export type Permission = 'public' | 'org-visible' | SignedInPermission | UserPermission | OrgPermission

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
  userNotFound: 'user does not exist',
  // Gitea's wording of reqSelfOrAdmin.
  selfOrAdminRequired: 'doer should be the site admin or be same as the contextUser',
} as const

/**
 * Throws forbidden when the caller is flagged `must_change_password`. The routes such a user must
 * still reach (see who they are, change the password, sign out) declare
 * `allowedWhilePasswordMustChange`, and the guard does not ask this there.
 */
export function assertPasswordCurrent(actor: Actor | undefined): void {
  if (actor?.user.mustChangePassword) throw new AppError('forbidden', Messages.mustChangePassword)
}

/**
 * Throws unauthenticated unless the caller signed in with Basic and the account's real password:
 * Gitea's `/users/{u}/tokens*` routes take nothing else (a token cannot mint tokens). A route
 * declares it beside its permission (`password: true`); it is a rule of the credential, not of who.
 */
export function assertPasswordCredential(actor: Actor | undefined): void {
  if (!actor) throw new AppError('unauthenticated', Messages.signInRequired)
  if (actor.credential !== 'basic-password') throw new AppError('unauthenticated', Messages.passwordRequired)
}

/** Permissions that anonymous callers may pass (public routes, and org routes open to all who may see the org). */
export const ANONYMOUS_PERMISSIONS: readonly Permission[] = ['public', 'org-visible']

export type RouteParams = Record<string, string | undefined>

/** The signed-in caller; throws unauthenticated for an anonymous one. */
export function signedInCaller(actor: Actor | undefined): Actor {
  if (!actor) throw new AppError('unauthenticated', Messages.signInRequired)
  return actor
}

/**
 * Answers "may this caller use a route requiring `permission`" for the signed-in permissions.
 * Throws unauthenticated (no caller), forbidden (not allowed).
 */
export function authorizeSignedIn(context: Pick<AuthzContext, 'config'>, actor: Actor | undefined, permission: SignedInPermission): Actor {
  const me = signedInCaller(actor)
  switch (permission) {
    case 'signed-in':
      return me
    case 'site-admin':
    case 'view_usage_analytics:site_admin':
    case 'admin:chart-source':
      if (!me.user.isAdmin) throw new AppError('forbidden', Messages.siteAdminRequired)
      return me
    case 'org-creator':
      if (!mayCreateOrgs(context.config, me.user)) throw new AppError('forbidden', Messages.createOrgNotAllowed)
      return me
  }
}

/**
 * The `self-or-admin` rule of the table: `viewer` is `target` themself or a site administrator.
 * Routes naming their target user in the path declare it as a permission; services ask it where
 * it decides what of a user is shown (emails, private profiles, memberships).
 */
export function selfOrAdmin(viewer: { id: number; isAdmin: boolean } | undefined, target: { id: number }): boolean {
  return viewer !== undefined && (viewer.id === target.id || viewer.isAdmin)
}

/**
 * Gitea's visibility of a user (docs/decisions.md §1): public users to everyone, limited ones to signed-in
 * users, private ones to themselves and site admins.
 */
export function userVisibleTo(user: UserRow, viewer: UserRow | undefined): boolean {
  if (selfOrAdmin(viewer, user)) return true
  if (user.visibility === VISIBILITY.public) return true
  return user.visibility === VISIBILITY.limited && viewer !== undefined
}

/**
 * Answers a permission on the user named by the `username` param and loads that user (`target`).
 * Throws unauthenticated (no caller), notFound (no such individual user, or one hidden from the
 * caller: never reveal what one may not see), forbidden (visible, but neither self nor admin).
 */
export async function authorizeOnUser(
  context: Pick<AuthzContext, 'userFacts'>,
  actor: Actor | undefined,
  permission: UserPermission,
  params: RouteParams,
): Promise<{ me: Actor; target: UserRow }> {
  const me = signedInCaller(actor)
  const target = await context.userFacts.findUserByName(params.username ?? '')
  if (!target || !userVisibleTo(target, me.user)) throw new AppError('notFound', Messages.userNotFound)
  switch (permission) {
    case 'self-or-admin':
      if (!selfOrAdmin(me.user, target)) throw new AppError('forbidden', Messages.selfOrAdminRequired)
      return { me, target }
  }
}

/**
 * Loads the org named by the `org` (or `orgname`) param, or owning the team of `teamId`, for a
 * caller who may see it (anonymous included). Throws notFound (org or team unknown or hidden).
 */
export function authorizeOrgVisible(
  context: Pick<AuthzContext, 'orgFacts'>,
  actor: Actor | undefined,
  params: RouteParams,
): Promise<OrgScope> {
  return loadOrgScope(context.orgFacts, actor, 'org-visible', params)
}

/**
 * Answers an org permission and loads the org scope. Throws unauthenticated (no caller), notFound
 * (org or team unknown or hidden from the caller), badRequest (`org-subscriber` on a name that is
 * not an org, or names an org hidden from the caller), forbidden (visible but not allowed).
 */
export async function authorizeInOrg(
  context: Pick<AuthzContext, 'orgFacts'>,
  actor: Actor | undefined,
  permission: OrgPermission,
  params: RouteParams,
): Promise<{ me: Actor; scope: OrgScope }> {
  const me = signedInCaller(actor)
  if (permission === 'org-subscriber' && me.user.type !== USER_TYPE.individual) throw new AppError('forbidden', Messages.individualRequired)
  return { me, scope: await loadOrgScope(context.orgFacts, me, permission, params) }
}

async function loadOrgScope(
  facts: OrgFacts,
  actor: Actor | undefined,
  permission: 'org-visible' | OrgPermission,
  params: RouteParams,
): Promise<OrgScope> {
  let team: TeamRow | undefined
  let org: UserRow | undefined
  if (params.teamId !== undefined) {
    team = /^\d+$/.test(params.teamId) ? await facts.findTeamById(Number(params.teamId)) : undefined
    if (!team) throw new AppError('notFound', Messages.teamNotFound)
    org = await facts.findOrgById(team.orgId)
  } else {
    const name = params.org ?? params.orgname ?? ''
    org = await facts.findOrgByName(name)
    if (!org && permission === 'org-subscriber') throw new AppError('badRequest', Messages.notOrg)
  }
  // What the caller may not see answers exactly as what does not exist (T3): the same error
  // for a hidden org or its team as for an unknown name or team id.
  const hidden = () =>
    team
      ? new AppError('notFound', Messages.teamNotFound)
      : permission === 'org-subscriber'
        ? new AppError('badRequest', Messages.notOrg)
        : new AppError('notFound', Messages.orgNotFound)
  if (!org) throw hidden()
  const siteAdmin = actor?.user.isAdmin ?? false
  const uid = actor?.user.id
  const role = uid === undefined ? undefined : await facts.orgRoleOf(org.id, uid)
  const custom = uid === undefined || role === undefined ? [] : await facts.customPermissionsOf(org.id, uid)
  const scope: OrgScope = { org, role, permissions: grantedPermissions(role, custom, siteAdmin), team }
  if (!orgVisibleTo(org, actor, role)) throw hidden()
  if (permission === 'org-visible' || permission === 'org-viewer') return scope
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
      if (!scope.permissions.has('admin:org') && !(uid !== undefined && (await facts.isTeamMember(team.id, uid))))
        throw new AppError('forbidden', Messages.teamMemberRequired)
      return scope
  }
  if (!scope.permissions.has(permission)) throw new AppError('forbidden', Messages.permissionRequired(permission))
  return scope
}

/**
 * Who may create organizations (docs/decisions.md §2): site admins always; others unless the site turned
 * it off (`allowRegularOrgCreation`) or their own `allowCreateOrganization` flag is off.
 */
function mayCreateOrgs(config: Config, user: UserRow): boolean {
  return user.isAdmin || (config.allowRegularOrgCreation && user.allowCreateOrganization)
}

/**
 * Gitea's visibility (docs/decisions.md §1): public orgs to everyone, limited ones to signed-in users,
 * private ones to members and site admins.
 */
function orgVisibleTo(org: UserRow, actor: Actor | undefined, role: OrgRole | undefined): boolean {
  if (org.visibility === VISIBILITY.public) return true
  if (!actor) return false
  if (org.visibility === VISIBILITY.limited || actor.user.isAdmin) return true
  return role !== undefined
}

/** Whether the caller may see members who keep their membership private: members and site admins. */
export const seesPrivateMembers = (scope: OrgScope, actor: Actor | undefined): boolean =>
  scope.role !== undefined || (actor?.user.isAdmin ?? false)
