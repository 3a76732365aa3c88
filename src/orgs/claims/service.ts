import type { Actor } from '../../authz/actor'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import type { UserRow } from '../../identity/store'
import type { CreateOrgOption, Organization } from '../schemas'
import { createOrg, describeOrg } from '../service'
import * as store from '../store'

export const Messages = {
  claimNotFound: 'claim id does not exist',
  alreadyClaimed: 'the organization has already been claimed',
} as const

/**
 * The marketplace flow's step: a standalone org with an empty Owners team and a fresh claim id
 * for its buyer. Throws invalid, duplicate (as `createOrg`).
 */
export async function registerClaimableOrg(deps: Deps, input: CreateOrgOption): Promise<{ org: UserRow; claimId: string }> {
  const org = await createOrg(deps, undefined, { ...input, origin: 'marketplace' })
  const claim = await deps.db.write((tx) => store.insertClaim(tx, org.id, crypto.randomUUID()))
  return { org, claimId: claim.claimId }
}

/** The caller claims the org: they join its Owners team. Throws notFound (unknown id), conflict (claimed). */
export async function claimOrg(deps: Deps, actor: Actor, claimId: string): Promise<Organization> {
  const claim = await store.findClaim(deps.db.read, claimId)
  if (!claim) throw new AppError('notFound', Messages.claimNotFound)
  if (claim.claimedAt) throw new AppError('conflict', Messages.alreadyClaimed)
  const taken = await deps.db.write((tx) => store.takeClaim(tx, claim, actor.user.id))
  if (!taken) throw new AppError('conflict', Messages.alreadyClaimed)
  const org = (await store.findOrgById(deps.db.read, claim.orgId))!
  return describeOrg(deps, org)
}

/** Whether a standalone org waits for its buyer, and the claim id of the oldest one. */
export async function checkClaimable(deps: Deps): Promise<{ isClaimable: boolean; claimID: string }> {
  const claim = await store.oldestUnclaimedMarketplaceClaim(deps.db.read)
  return { isClaimable: claim !== undefined, claimID: claim?.claimId ?? '' }
}
