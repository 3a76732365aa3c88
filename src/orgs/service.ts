import { USER_TYPE, VISIBILITY, VISIBILITY_NAMES, type VisibilityName } from '../../db/schema/codes'
import { auditConcerns } from '../audit/recorder'
import type { Actor } from '../authz/actor'
import { Messages as AuthzMessages, type OrgScope, selfOrAdmin } from '../authz/authorize'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import type { Page, Paged } from '../http/pagination'
import { removeAvatar, saveAvatar } from '../identity/avatars/store'
import { assertUsableName, emailShownTo } from '../identity/service'
import type { Profile } from '../identity/settings/service'
import { findUserByName, type UserRow, updateUser } from '../identity/store'
import type { Executor } from '../storage/database'
import { orgLastAdmin } from './rules'
import type { CreateOrgOption, CreateOrgParams, EditOrgOption, Organization } from './schemas'
import * as store from './store'
import { insertSystemAdmin } from './system-admin/service'

export const Messages = {
  websiteInvalid: 'website must be an http(s) URL',
  userNotUsable: 'the user does not exist or is not active',
  userNotFound: 'user does not exist',
} as const

const PRIVATE = VISIBILITY.private

/** The stable avatar URL of an account (served by avatars/routes.ts). */
const avatarUrlOf = (publicUrl: string, account: UserRow) => `${publicUrl}/avatars/${encodeURIComponent(account.lowerName)}`

/** The Organization JSON: the spec's fields, `name` for Gitea clients, `orgType` as a number. */
function presentOrg(publicUrl: string, org: UserRow, details: store.OrgDetailsRow | undefined): Organization {
  return {
    id: org.id,
    username: org.name,
    name: org.name,
    full_name: org.fullName,
    avatar_url: avatarUrlOf(publicUrl, org),
    description: org.description,
    website: org.website,
    location: org.location,
    fleetmgrManagementClusterEndPoint: details?.fleetmgrEndpoint ?? '',
    visibility: VISIBILITY_NAMES[org.visibility] ?? 'public',
    orgType: org.visibility,
  }
}

/** The Organization of `org`, with its details loaded. */
export async function describeOrg(deps: Deps, org: UserRow): Promise<Organization> {
  return presentOrg(deps.config.publicUrl, org, await store.findOrgDetails(deps.db.read, org.id))
}

/** Presents many orgs, loading their details. */
export async function presentOrgs(deps: Deps, orgs: readonly UserRow[]): Promise<Organization[]> {
  return Promise.all(orgs.map((org) => describeOrg(deps, org)))
}

function assertWebsite(website: string | undefined): void {
  if (website && !/^https?:\/\/[^\s]+$/i.test(website))
    throw new AppError('invalid', Messages.websiteInvalid, [{ field: 'website', message: Messages.websiteInvalid }])
}

/**
 * Runs `fn` in a write transaction once the org is known to still exist. The guard loaded the
 * org before the transaction; a concurrent delete must turn later writes into notFound, never
 * into rows hanging off a deleted org or a 500 from a foreign key.
 */
export async function writeInOrg<T>(deps: Deps, scope: OrgScope, fn: (tx: Executor) => Promise<T>): Promise<T> {
  return deps.db.write(async (tx) => {
    if (!(await store.findOrgById(tx, scope.org.id))) throw new AppError('notFound', AuthzMessages.orgNotFound)
    return fn(tx)
  })
}

/** `visibility` when given and non-empty, else `orgType`, else `fallback`. */
function visibilityOf(input: { visibility?: '' | VisibilityName; orgType?: VisibilityName }, fallback: number): number {
  if (input.visibility) return VISIBILITY[input.visibility]
  if (input.orgType) return VISIBILITY[input.orgType]
  return fallback
}

export interface NewOrgInput extends CreateOrgOption {
  /** Which flow made it: `api`, `settings` or `marketplace`. */
  origin: 'api' | 'settings' | 'marketplace'
}

/**
 * Creates an org with its Owners team; `owner` (the creator, or nobody for a marketplace org
 * awaiting its buyer) becomes its only, privately listed, member; a fleet-manager-origin org also
 * gets its system admin. Throws invalid (name, website), duplicate (name taken by a user or org),
 * conflict (the system admin's login is taken).
 */
export async function createOrg(deps: Deps, owner: UserRow | undefined, input: NewOrgInput): Promise<UserRow> {
  assertUsableName(input.username, 'username')
  assertWebsite(input.website)
  return deps.db.write(async (tx) => {
    const org = await store.insertOrgWithOwner(
      tx,
      {
        name: input.username,
        lowerName: input.username.toLowerCase(),
        fullName: input.full_name ?? '',
        description: input.description ?? '',
        website: input.website ?? '',
        location: input.location ?? '',
        visibility: visibilityOf(input, VISIBILITY.public),
      },
      {
        createdBy: owner?.id ?? null,
        createdBySiteAdmin: owner?.isAdmin ?? false,
        origin: input.origin,
        fleetmgrEndpoint: input.fleetmgrManagementClusterEndPoint ?? '',
      },
      owner?.id,
    )
    // A fleet-manager-origin org gets its system admin at once (docs/decisions.md §6a): the fleet manager syncs through it.
    if (input.fleetmgrManagementClusterEndPoint) await insertSystemAdmin(tx, org)
    // The new org's owners see its creation in their audit trail.
    auditConcerns({ org })
    return org
  })
}

/** Applies the fields present in `input`; absent ones stay. Throws invalid (website), notFound (deleted meanwhile). */
export async function editOrg(deps: Deps, scope: OrgScope, input: EditOrgOption): Promise<Organization> {
  assertWebsite(input.website)
  const org = await writeInOrg(deps, scope, async (tx) => {
    if (input.fleetmgrManagementClusterEndPoint !== undefined)
      await store.updateOrgDetails(tx, scope.org.id, { fleetmgrEndpoint: input.fleetmgrManagementClusterEndPoint })
    return (await updateUser(tx, scope.org.id, {
      ...(input.full_name === undefined ? {} : { fullName: input.full_name }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.website === undefined ? {} : { website: input.website }),
      ...(input.location === undefined ? {} : { location: input.location }),
      visibility: visibilityOf(input, scope.org.visibility),
    }))!
  })
  return describeOrg(deps, org)
}

/**
 * Deletes the org and all it holds; `orgLastAdmin` must hold (forbidden otherwise), checked in
 * the deleting transaction so an admin who joins meanwhile is counted.
 */
export async function deleteOrg(deps: Deps, scope: OrgScope, actor: Actor): Promise<void> {
  await deps.db.write(async (tx) => {
    await orgLastAdmin(tx, scope, actor)
    await store.deleteOrg(tx, scope.org.id, deps.orgDepartures)
  })
  if (scope.org.avatar) await removeAvatar(deps.db, scope.org.avatar)
}

/**
 * The profile of an existing, active individual user, as an org sees it. A private user counts
 * as unknown unless they are the caller, the caller is a site admin, or both are members of this
 * org (anyone can make an org, so this route must not reveal private profiles). Any signed-in
 * caller who sees the org may ask (the guard: 404 for a hidden org). Throws badRequest.
 */
export async function orgUserProfile(deps: Deps, scope: OrgScope, actor: Actor, username: string): Promise<Profile> {
  const user = await findUserByName(deps.db.read, username)
  if (!user || user.type !== USER_TYPE.individual || !user.isActive || user.prohibitLogin)
    throw new AppError('badRequest', Messages.userNotUsable)
  const seesPrivate =
    selfOrAdmin(actor.user, user) ||
    (scope.role !== undefined && (await store.findMembership(deps.db.read, scope.org.id, user.id)) !== undefined)
  if (user.visibility === PRIVATE && !seesPrivate) throw new AppError('badRequest', Messages.userNotUsable)
  return {
    name: user.name,
    full_name: user.fullName,
    email: emailShownTo(user, { user: actor.user, publicUrl: deps.config.publicUrl }),
    website: user.website,
    location: user.location,
    language: user.language,
    description: user.description,
    keep_email_private: user.keepEmailPrivate,
  }
}

/** The caller's own orgs, private memberships and hidden orgs included. */
export async function listMyOrgs(deps: Deps, actor: Actor, page: Page): Promise<Paged<Organization>> {
  const { rows, total } = await store.listOrgsOfUser(deps.db.read, actor.user.id, 'all', page)
  return { items: await presentOrgs(deps, rows), total }
}

/**
 * Orgs of `username`: everything for the user themself and site admins; for others only public
 * memberships of public orgs. Throws notFound (no such individual user, or a private one seen by
 * someone else: Gitea hides private profiles behind 404).
 */
export async function listOrgsOfUser(deps: Deps, actor: Actor, username: string, page: Page): Promise<Paged<Organization>> {
  const user = await findUserByName(deps.db.read, username)
  const seesAll = user !== undefined && selfOrAdmin(actor.user, user)
  if (!user || (user.visibility === PRIVATE && !seesAll)) throw new AppError('notFound', Messages.userNotFound)
  const { rows, total } = await store.listOrgsOfUser(deps.db.read, user.id, seesAll ? 'all' : 'public', page)
  return { items: await presentOrgs(deps, rows), total }
}

/** The org's stable avatar URL. */
export const orgAvatarUrl = (deps: Deps, scope: OrgScope) => avatarUrlOf(deps.config.publicUrl, scope.org)

const bytesOf = async (file: File | undefined) => (file ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array())

/** Replaces the org's avatar with an uploaded image. Throws invalid (missing, too large, not an image), notFound (org deleted meanwhile). */
export async function uploadOrgAvatar(deps: Deps, scope: OrgScope, file: File | undefined): Promise<{ avatar_url: string }> {
  const name = await saveAvatar(deps.db, `org-${scope.org.id}`, await bytesOf(file))
  try {
    await writeInOrg(deps, scope, (tx) => updateUser(tx, scope.org.id, { avatar: name }))
  } catch (e) {
    await removeAvatar(deps.db, name)
    throw e
  }
  if (scope.org.avatar) await removeAvatar(deps.db, scope.org.avatar)
  return { avatar_url: orgAvatarUrl(deps, scope) }
}

/**
 * The console's create form: like `createOrg`, plus an optional avatar checked before anything
 * is stored (a bad image creates no org). Throws invalid, duplicate.
 */
export async function createOrgFromForm(deps: Deps, creator: UserRow, form: CreateOrgParams): Promise<UserRow> {
  assertUsableName(form.org_name, 'org_name')
  // A fresh key per upload: two forms for one name must not share (and then delete) one file.
  const avatar = form.avatar ? await saveAvatar(deps.db, `org-new-${crypto.randomUUID()}`, await bytesOf(form.avatar)) : ''
  try {
    const org = await createOrg(deps, creator, {
      username: form.org_name,
      full_name: form.full_name,
      description: form.description,
      website: form.website,
      location: form.location,
      visibility: form.visibility,
      origin: 'settings',
    })
    if (!avatar) return org
    return (await deps.db.write((tx) => updateUser(tx, org.id, { avatar })))!
  } catch (e) {
    if (avatar) await removeAvatar(deps.db, avatar)
    throw e
  }
}

/** Goes back to the generated default avatar. */
export async function deleteOrgAvatar(deps: Deps, scope: OrgScope): Promise<void> {
  await writeInOrg(deps, scope, (tx) => updateUser(tx, scope.org.id, { avatar: '' }))
  if (scope.org.avatar) await removeAvatar(deps.db, scope.org.avatar)
}
