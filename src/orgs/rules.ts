import type { Actor } from '../authz/actor'
import type { OrgScope } from '../authz/authorize'
import { AppError } from '../errors'
import { findUserById } from '../identity/store'
import type { Executor } from '../storage/database'
import * as orgStore from './store'
import { findSystemAdmin } from './system-admin/store'

export const Messages = {
  lastOwner: 'the last owner of an organization cannot leave it',
  systemAdminStays: "the organization's system admin stays in its Owners team; it goes with the organization",
  notLastAdmin: 'the organization still has other owners or admins; only its last admin may delete it',
  siteAdminInAdminOrg: 'a site administrator cannot be removed from the administrative organization',
} as const

/** `ids` without the org's system admin, which never counts as an owner or admin in these rules (docs/decisions.md §6a). */
async function withoutSystemAdmin(db: Executor, orgId: number, ids: number[]): Promise<number[]> {
  const systemAdmin = await findSystemAdmin(db, orgId)
  return ids.filter((uid) => uid !== systemAdmin?.id)
}

/**
 * `orgLastMember`: refuses (conflict) to take `uid` out of the org when they are the only
 * member of its Owners team besides the org's system admin, so an org is never left without an
 * owner who is a person.
 */
export async function orgLastMember(db: Executor, orgId: number, uid: number): Promise<void> {
  const owners = await withoutSystemAdmin(db, orgId, await orgStore.ownerIds(db, orgId))
  if (owners.length === 1 && owners[0] === uid) throw new AppError('conflict', Messages.lastOwner)
}

/**
 * `orgLastAdmin`: only the last remaining owner or admin (the system admin aside) may delete an
 * org (forbidden while others remain). Site admins act for the site and are not held to it.
 */
export async function orgLastAdmin(db: Executor, scope: OrgScope, actor: Actor): Promise<void> {
  if (actor.user.isAdmin) return
  const admins = await withoutSystemAdmin(db, scope.org.id, await orgStore.memberIdsWith(db, scope.org.id, ['owner', 'admin']))
  if (admins.some((uid) => uid !== actor.user.id)) throw new AppError('forbidden', Messages.notLastAdmin)
}

/**
 * Who stays when people are taken out: site admins in the administrative org (the oldest org made
 * by a site admin), and the org's system admin in its Owners team. Runs in the removing
 * transaction, after the removal, so every route that takes people out (member delete, member
 * actions, team member delete, team delete) is held to it: throws forbidden (a site admin among
 * `uids` is no member any more) or conflict (the system admin left Owners), rolling the removal back.
 */
export async function requiredMembersStay(tx: Executor, orgId: number, uids: readonly number[]): Promise<void> {
  const systemAdmin = await findSystemAdmin(tx, orgId)
  if (systemAdmin && uids.includes(systemAdmin.id) && !(await orgStore.ownerIds(tx, orgId)).includes(systemAdmin.id))
    throw new AppError('conflict', Messages.systemAdminStays)
  if ((await orgStore.oldestOrgOfSiteAdmin(tx)) !== orgId) return
  for (const uid of uids) {
    if (await orgStore.findMembership(tx, orgId, uid)) continue
    if ((await findUserById(tx, uid))?.isAdmin) throw new AppError('forbidden', Messages.siteAdminInAdminOrg)
  }
}
