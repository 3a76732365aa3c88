import type { Actor } from '../../authz/actor'
import type { OrgScope } from '../../authz/authorize'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import * as orgStore from '../store'
import { findSystemAdmin } from '../system-admin/store'
import type { AccessToken, FleetmgrApiToken } from './schemas'
import * as store from './store'

export const Messages = {
  notFleetmgrOrigin: 'the organization is not of fleet-manager origin (it has no fleetmgrManagementClusterEndPoint)',
  none: 'the organization has no fleet-manager sync token',
  created: 'fleet-manager sync token created',
  deleted: 'fleet-manager sync token deleted',
} as const

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** 20 upper-case alphanumerics (docs/decisions.md §6a), uniformly drawn. */
function newAccessKeyId(): string {
  let id = ''
  while (id.length < 20) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // 252 = 7 × 36: bytes above it would favour the first letters.
      if (byte < 252 && id.length < 20) id += ALPHANUMERIC[byte % 36]
    }
  }
  return id
}

/** 40 base64url characters (30 random bytes). */
const newSecretAccessKey = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(30))).toString('base64url')

/** The org's sync token, secret included (holders of view:sync-token see it). Throws notFound. */
export async function getSyncToken(deps: Deps, scope: OrgScope): Promise<FleetmgrApiToken> {
  const row = await store.findSyncToken(deps.db.read, scope.org.id)
  if (!row) throw new AppError('notFound', Messages.none)
  return {
    userID: row.userId,
    orgID: scope.org.id,
    orgName: scope.org.name,
    accessKeyID: row.accessKeyId,
    secretAccessKey: await deps.secrets.open(row.sealedSecret),
  }
}

/**
 * Mints (or replaces) the org's sync token; `sha1`, when given, is the secret. Throws badRequest
 * when the org is not of fleet-manager origin.
 */
export async function createSyncToken(deps: Deps, scope: OrgScope, me: Actor, body: AccessToken): Promise<{ message: string }> {
  const details = await orgStore.findOrgDetails(deps.db.read, scope.org.id)
  if (!details?.fleetmgrEndpoint) throw new AppError('badRequest', Messages.notFleetmgrOrigin)
  const systemAdmin = await findSystemAdmin(deps.db.read, scope.org.id)
  const sealedSecret = await deps.secrets.seal(body.sha1 ?? newSecretAccessKey())
  await deps.db.write((tx) =>
    store.putSyncToken(tx, {
      orgId: scope.org.id,
      userId: systemAdmin?.id ?? me.user.id,
      name: body.name ?? '',
      accessKeyId: newAccessKeyId(),
      sealedSecret,
    }),
  )
  return { message: Messages.created }
}

/** Removes the org's sync token; none is a no-op. */
export async function deleteSyncToken(deps: Deps, scope: OrgScope): Promise<void> {
  await deps.db.write((tx) => store.deleteSyncToken(tx, scope.org.id))
}
