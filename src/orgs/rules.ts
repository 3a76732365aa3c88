import type { Actor } from '../authz/actor'
import type { OrgScope } from '../authz/authorize'
import { AppError } from '../errors'
import { findUserById } from '../identity/store'
import type { Executor } from '../storage/database'
import * as orgStore from './store'

export const Messages = {
  lastOwner: 'the last owner of an organization cannot leave it',
  notLastAdmin: 'the organization still has other owners or admins; only its last admin may delete it',
  siteAdminInAdminOrg: 'a site administrator cannot be removed from the administrative organization',
} as const

/**
 * `orgLastMember`: refuses (conflict) to take `uid` out of the org when they are the only
 * member of its Owners team, so an org is never left without an owner.
 */
export async function orgLastMember(db: Executor, orgId: number, uid: number): Promise<void> {
  const owners = await orgStore.ownerIds(db, orgId)
  if (owners.length === 1 && owners[0] === uid) throw new AppError('conflict', Messages.lastOwner)
}

/**
 * `orgLastAdmin`: only the last remaining owner or admin may delete an org (forbidden while
 * others remain). Site admins act for the site and are not held to it.
 */
export async function orgLastAdmin(db: Executor, scope: OrgScope, actor: Actor): Promise<void> {
  if (actor.user.isAdmin) return
  const others = (await orgStore.ownerAndAdminIds(db, scope.org.id)).filter((uid) => uid !== actor.user.id)
  if (others.length > 0) throw new AppError('forbidden', Messages.notLastAdmin)
}

/**
 * Site admins cannot be removed from the administrative org (the oldest org made by a site
 * admin). Runs in the removing transaction, after the removal, so every route that takes people
 * out (member delete, member actions, team member delete, team delete) is held to it: throws
 * forbidden, rolling the removal back, when a site admin among `uids` is no member any more.
 */
export async function siteAdminsStay(tx: Executor, orgId: number, uids: readonly number[]): Promise<void> {
  if ((await orgStore.oldestOrgOfSiteAdmin(tx)) !== orgId) return
  for (const uid of uids) {
    if (await orgStore.findMembership(tx, orgId, uid)) continue
    if ((await findUserById(tx, uid))?.isAdmin) throw new AppError('forbidden', Messages.siteAdminInAdminOrg)
  }
}
