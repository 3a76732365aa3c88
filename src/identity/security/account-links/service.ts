import { rfc3339 } from '../../../clock'
import type { Deps } from '../../../deps'
import { AppError } from '../../../errors'
import { findUserById } from '../../store'
import * as store from './store'

export const Messages = {
  linkNotFound: 'no link to that login source',
  onlySignIn: 'this link is the only way to sign in to the account: set a password first',
} as const

const present = (row: store.AccountLinkRow) => ({
  id: row.sourceId,
  provider: row.provider,
  name: row.sourceName,
  externalID: row.externalId,
  createdAt: rfc3339(row.createdAt),
})

export async function listAccountLinks(deps: Deps, uid: number) {
  return (await store.listLinksOfUser(deps.db.read, uid)).map(present)
}

/**
 * Removes the user's link to login source `sourceId`. Throws notFound when there is none, and
 * invalid when the account has no password and no other link: it could never sign in again.
 */
export async function unlinkAccount(deps: Deps, uid: number, sourceId: number): Promise<void> {
  await deps.db.write(async (tx) => {
    const links = await store.listLinksOfUser(tx, uid)
    if (!links.some((link) => link.sourceId === sourceId)) throw new AppError('notFound', Messages.linkNotFound)
    const user = await findUserById(tx, uid)
    if (user?.passwordHash === '' && links.length === 1) throw new AppError('invalid', Messages.onlySignIn)
    await store.deleteLink(tx, uid, sourceId)
  })
}
