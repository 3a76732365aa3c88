import { USER_TYPE } from '../../../db/schema/codes'
import type { Actor } from '../../authz/actor'
import { type OrgScope, seesPrivateMembers } from '../../authz/authorize'
import { assertHoldsAll } from '../../authz/grants'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import type { Page, Paged } from '../../http/pagination'
import type { User } from '../../identity/schemas'
import { presentUser } from '../../identity/service'
import { findUserById, findUserByName, type UserRow } from '../../identity/store'
import { grantsOfMember } from '../grants'
import { Messages as ConditionMessages, orgLastMember, requiredMembersStay } from '../rules'
import * as store from '../store'
import { findMemberCandidateByName } from '../system-admin/store'

export const Messages = {
  userNotFound: 'user does not exist',
  notMember: 'the user is not a member of the organization',
  notPublicMember: 'the user is not a public member of the organization',
  uidRequired: 'query parameter uid must be the id of a user',
  unknownAction: 'action must be one of private, public, remove, leave',
  cannotPublicize: 'Cannot publicize another member',
  cannotConceal: 'Cannot conceal another member',
  changeOthersVisibility: 'only an organization owner may change the visibility of another member',
  removeNeedsOwner: 'only an organization owner may remove a member',
  siteAdminInAdminOrg: ConditionMessages.siteAdminInAdminOrg,
} as const

const MEMBER_ACTIONS = ['private', 'public', 'remove', 'leave'] as const

/**
 * Members as `actor` may see them: all members for members and site admins, public
 * memberships for everyone else (or always, with `publicOnly`). `orgAdmin` marks the org's
 * owners and admins.
 */
export async function listMembers(
  deps: Deps,
  scope: OrgScope,
  actor: Actor | undefined,
  page: Page,
  publicOnly: boolean,
): Promise<Paged<User>> {
  const onlyPublic = publicOnly || !seesPrivateMembers(scope, actor)
  const { rows, total } = await store.listMembers(deps.db.read, scope.org.id, onlyPublic, page)
  const admins = new Set(await store.memberIdsWith(deps.db.read, scope.org.id, ['owner', 'admin']))
  const viewer = { user: actor?.user, publicUrl: deps.config.publicUrl }
  return { items: rows.map((u) => presentUser(u, viewer, { orgAdmin: admins.has(u.id) })), total }
}

async function userNamed(deps: Deps, scope: OrgScope, username: string): Promise<UserRow> {
  const user = await findMemberCandidateByName(deps.db.read, scope.org.id, username)
  if (!user) throw new AppError('notFound', Messages.userNotFound)
  return user
}

/**
 * Gitea's member check: members and site admins learn the truth (`member`, or notFound); a
 * signed-in outsider asking about themself gets notFound; anyone else is sent to the public
 * check (`redirect`). Throws notFound (not a member; unknown user, to members and site admins only).
 */
export async function checkMember(deps: Deps, scope: OrgScope, actor: Actor | undefined, username: string): Promise<'member' | 'redirect'> {
  if (!seesPrivateMembers(scope, actor)) {
    if (actor && actor.user.lowerName === username.toLowerCase()) throw new AppError('notFound', Messages.notMember)
    // Outsiders are redirected whether or not the name exists: the answer must not reveal
    // users (private ones among them) that `/users/{username}` hides.
    return 'redirect'
  }
  const user = await userNamed(deps, scope, username)
  if (!(await store.findMembership(deps.db.read, scope.org.id, user.id))) throw new AppError('notFound', Messages.notMember)
  return 'member'
}

/** Throws notFound unless `username` is a public member; the same for unknown names (no existence oracle). */
export async function assertPublicMember(deps: Deps, scope: OrgScope, username: string): Promise<void> {
  const user = await findUserByName(deps.db.read, username)
  const isPublic = user !== undefined && ((await store.findMembership(deps.db.read, scope.org.id, user.id))?.isPublic ?? false)
  if (!isPublic) throw new AppError('notFound', Messages.notPublicMember)
}

/**
 * Takes `user` out of the org (all its teams). A non-member is a no-op. Throws forbidden (a
 * member holding more than the caller: T32; a site admin in the administrative org:
 * `requiredMembersStay`) or conflict (`orgLastMember`: the last owner; the org's system admin:
 * `requiredMembersStay`). The conditions are checked in the removing transaction so two owners
 * leaving at once cannot both pass.
 */
async function removeFromOrg(deps: Deps, scope: OrgScope, user: UserRow): Promise<void> {
  if (!(await store.findMembership(deps.db.read, scope.org.id, user.id))) return
  assertHoldsAll(scope, await grantsOfMember(deps.db.read, scope.org.id, user.id))
  await deps.db.write(async (tx) => {
    await orgLastMember(tx, scope.org.id, user.id)
    await store.deleteMembership(tx, scope.org.id, user.id, deps.orgDepartures)
    await requiredMembersStay(tx, scope.org.id, [user.id])
  })
}

/** `DELETE /orgs/{org}/members/{username}`. Throws notFound (unknown user), forbidden, conflict. */
export async function removeMember(deps: Deps, scope: OrgScope, username: string): Promise<void> {
  await removeFromOrg(deps, scope, await userNamed(deps, scope, username))
}

/**
 * Publicizes or conceals the caller's own membership; nobody may do it for another member.
 * Throws forbidden (another user).
 */
export async function setOwnPublicity(deps: Deps, scope: OrgScope, actor: Actor, username: string, isPublic: boolean): Promise<void> {
  if (username.toLowerCase() !== actor.user.lowerName)
    throw new AppError('forbidden', isPublic ? Messages.cannotPublicize : Messages.cannotConceal)
  await deps.db.write((tx) => store.setMembershipPublic(tx, scope.org.id, actor.user.id, isPublic))
}

/**
 * The console's member actions (`?uid=`): `public`/`private` set a membership's visibility (one's
 * own, or anyone's with `admin:org`), `remove` takes a member out (`admin:org`), `leave` takes
 * the caller out (uid ignored). Throws badRequest (unknown action, uid missing or not a user),
 * forbidden, conflict (last owner).
 */
export async function memberAction(deps: Deps, scope: OrgScope, actor: Actor, action: string, uid: string | undefined): Promise<void> {
  if (!(MEMBER_ACTIONS as readonly string[]).includes(action)) throw new AppError('badRequest', Messages.unknownAction)
  if (action === 'leave') return removeFromOrg(deps, scope, actor.user)
  const target = uid !== undefined && /^\d+$/.test(uid) ? await findUserById(deps.db.read, Number(uid)) : undefined
  if (!target || target.type !== USER_TYPE.individual) throw new AppError('badRequest', Messages.uidRequired)
  const mayManage = scope.permissions.has('admin:org')
  if (action === 'remove') {
    if (!mayManage) throw new AppError('forbidden', Messages.removeNeedsOwner)
    return removeFromOrg(deps, scope, target)
  }
  if (target.id !== actor.user.id && !mayManage) throw new AppError('forbidden', Messages.changeOthersVisibility)
  await deps.db.write((tx) => store.setMembershipPublic(tx, scope.org.id, target.id, action === 'public'))
}
