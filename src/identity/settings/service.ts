import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { DEFAULT_PAGE_SIZE } from '../../http/pagination'
import { type Executor, isUniqueViolation } from '../../storage/database'
import { removeAvatar } from '../avatars/store'
import { findOwnEmail } from '../emails/service'
import { type EmailRow, setPrimaryEmail } from '../emails/store'
import { checkPasswordAttempt } from '../limiter/service'
import { hashPassword } from '../passwords'
import { assertUsableName, MIN_PASSWORD_LENGTH } from '../service'
import { deleteOtherSessions } from '../sessions/store'
import * as store from '../store'

export const Messages = {
  soleOwner: 'you are the only owner of an organization; add another owner or delete the organization first',
  websiteInvalid: 'website must be an http(s) URL',
  emailNotOwned: 'the primary email must be one of your activated addresses; add it first',
  oldPasswordWrong: 'the current password is incorrect',
  passwordTooShort: `password must be at least ${MIN_PASSWORD_LENGTH} characters`,
  retypeMismatch: 'retype does not match password',
  accountPasswordWrong: 'the password is incorrect',
  lastAdmin: 'the last site administrator cannot delete their account',
} as const

export interface Profile {
  name: string
  full_name: string
  email: string
  website: string
  location: string
  language: string
  description: string
  keep_email_private: boolean
}

export function profileOf(user: store.UserRow): Profile {
  return {
    name: user.name,
    full_name: user.fullName,
    email: user.email,
    website: user.website,
    location: user.location,
    language: user.language,
    description: user.description,
    keep_email_private: user.keepEmailPrivate,
  }
}

const invalid = (field: string, message: string) => new AppError('invalid', message, [{ field, message }])

function checkWebsite(website: string): void {
  if (website === '') return
  try {
    const url = new URL(website)
    if (url.protocol === 'http:' || url.protocol === 'https:') return
  } catch {
    /* fall through to the error */
  }
  throw invalid('website', Messages.websiteInvalid)
}

/**
 * Updates the profile fields that are present; only these fields are read, so anything else in
 * the body (`is_admin`, `id`, ...) changes nothing. A new `name` must be usable and free; a new
 * `email` must be one of the caller's activated addresses and becomes primary. Throws invalid,
 * duplicate.
 */
export async function updateProfile(deps: Deps, user: store.UserRow, input: Partial<Profile>): Promise<Profile> {
  const changes: Partial<store.NewUser> = {}
  if (input.name !== undefined && input.name !== user.name) {
    assertUsableName(input.name, 'name')
    changes.name = input.name
    changes.lowerName = input.name.toLowerCase()
  }
  if (input.website !== undefined) {
    checkWebsite(input.website.trim())
    changes.website = input.website.trim()
  }
  if (input.full_name !== undefined) changes.fullName = input.full_name.trim()
  if (input.location !== undefined) changes.location = input.location.trim()
  if (input.language !== undefined) changes.language = input.language.trim()
  if (input.description !== undefined) changes.description = input.description
  if (input.keep_email_private !== undefined) changes.keepEmailPrivate = input.keep_email_private
  let newPrimary: EmailRow | undefined
  if (input.email !== undefined && input.email.trim().toLowerCase() !== user.email.toLowerCase()) {
    newPrimary = await findOwnEmail(deps.db, user, input.email)
    if (!newPrimary?.isActivated) throw invalid('email', Messages.emailNotOwned)
  }
  const updated = await deps.db.write(async (tx) => {
    if (newPrimary) await setPrimaryEmail(tx, user.id, newPrimary)
    try {
      return await store.updateUser(tx, user.id, changes)
    } catch (e) {
      throw isUniqueViolation(e)
        ? new AppError('duplicate', store.StoreMessages.nameTaken, [{ field: 'name', message: 'is already taken' }])
        : e
    }
  })
  return profileOf(updated ?? user)
}

/**
 * Changes the password after checking the current one (rate-limited like sign-in), then ends
 * every other session of the user. Throws invalid, tooManyRequests.
 */
export async function changePassword(
  deps: Deps,
  user: store.UserRow,
  input: { old_password: string; password: string; retype: string },
  client: { address: string; sessionId: number | undefined },
): Promise<void> {
  if (!(await checkPasswordAttempt(deps, user, user.name, input.old_password, client.address)))
    throw invalid('old_password', Messages.oldPasswordWrong)
  if (input.password.length < MIN_PASSWORD_LENGTH) throw invalid('password', Messages.passwordTooShort)
  if (input.retype !== input.password) throw invalid('retype', Messages.retypeMismatch)
  const passwordHash = await hashPassword(input.password)
  await deps.db.write(async (tx) => {
    await store.updateUser(tx, user.id, { passwordHash, mustChangePassword: false })
    await deleteOtherSessions(tx, user.id, client.sessionId)
  })
}

/**
 * Deletes the caller's account after checking the password (rate-limited like sign-in). Sessions,
 * tokens, emails, follow relations and two-factor rows go with it (foreign-key cascades); the
 * avatar file is removed. The last site admin may not go, nor the only owner of an org
 * (`ownsNoOrgAlone`). Throws forbidden, conflict, tooManyRequests.
 */
export async function deleteAccount(deps: Deps, user: store.UserRow, password: string, address: string): Promise<void> {
  if (!(await checkPasswordAttempt(deps, user, user.name, password, address)))
    throw new AppError('forbidden', Messages.accountPasswordWrong)
  await deps.db.write(async (tx) => {
    if (user.isAdmin && (await store.countAdmins(tx)) <= 1) throw new AppError('forbidden', Messages.lastAdmin)
    await ownsNoOrgAlone(deps, tx, user.id)
    await store.deleteUser(tx, user.id)
  })
  await removeAvatar(deps.db, user.avatar)
}

export const pageSizeOf = (user: store.UserRow) => ({ pageSize: user.pageSize > 0 ? user.pageSize : DEFAULT_PAGE_SIZE })

export async function setPageSize(deps: Deps, user: store.UserRow, pageSize: number): Promise<{ pageSize: number }> {
  await deps.db.write((tx) => store.updateUser(tx, user.id, { pageSize }))
  return { pageSize }
}

/**
 * The last-owner rule for account deletion: refuses (conflict) while `uid` is the only owner of
 * some org, which would otherwise be left with nobody to run it.
 */
async function ownsNoOrgAlone(deps: Deps, tx: Executor, uid: number): Promise<void> {
  if ((await deps.accountOrgFacts.orgIdsOwnedSolelyBy(tx, uid)).length > 0) throw new AppError('conflict', Messages.soleOwner)
}
