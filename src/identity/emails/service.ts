import { AppError } from '../../errors'
import type { Database } from '../../storage/database'
import { isEmailAddress } from '../service'
import type { UserRow } from '../store'
import * as store from './store'

export const Messages = {
  emailListEmpty: 'Email list empty',
  emailUsed: 'Email address has been used',
  emailInvalid: 'Email address is invalid',
  emailNotFound: 'Email address not found',
  primaryNotDeletable: 'The primary email address cannot be deleted',
  primaryNotActivated: 'Only an activated email address can become primary',
  signInEmailConflict: 'The email address of this account is already used by another account',
} as const

/** Trims, drops exact repeats (case-insensitively) and keeps the caller's order. */
function normalised(emails: string[]): string[] {
  const seen = new Set<string>()
  const out: string[] = []
  for (const raw of emails) {
    const email = raw.trim()
    if (seen.has(email.toLowerCase())) continue
    seen.add(email.toLowerCase())
    out.push(email)
  }
  return out
}

export const listEmails = (db: Database, user: UserRow) => store.listEmailsOfUser(db.read, user.id)

/**
 * Adds addresses as activated, non-primary, all or none. Throws invalid (empty list, bad address,
 * address already used by anyone, the caller included).
 */
export async function addEmails(db: Database, user: UserRow, emails: string[]): Promise<store.EmailRow[]> {
  const wanted = normalised(emails)
  if (wanted.length === 0) throw new AppError('invalid', Messages.emailListEmpty, [{ field: 'emails', message: Messages.emailListEmpty }])
  const bad = wanted.find((email) => !isEmailAddress(email))
  if (bad !== undefined)
    throw new AppError('invalid', `${Messages.emailInvalid}: ${bad}`, [{ field: 'emails', message: Messages.emailInvalid }])
  return db.write(async (tx) => {
    const taken = await store.findEmails(
      tx,
      wanted.map((e) => e.toLowerCase()),
    )
    if (taken.length > 0)
      throw new AppError('invalid', `${Messages.emailUsed}: ${taken[0].email}`, [{ field: 'emails', message: Messages.emailUsed }])
    await store.insertEmails(tx, user.id, wanted)
    return store.listEmailsOfUser(tx, user.id)
  })
}

/**
 * Deletes addresses of the caller, all or none. Throws invalid (empty list, the primary address)
 * or notFound (an address the caller does not own).
 */
export async function deleteEmails(db: Database, user: UserRow, emails: string[]): Promise<void> {
  const wanted = normalised(emails)
  if (wanted.length === 0) throw new AppError('invalid', Messages.emailListEmpty, [{ field: 'emails', message: Messages.emailListEmpty }])
  await db.write(async (tx) => {
    const owned = new Map((await store.listEmailsOfUser(tx, user.id)).map((row) => [row.lowerEmail, row]))
    const rows = wanted.map((email) => {
      const row = owned.get(email.toLowerCase())
      if (!row) throw new AppError('notFound', `${Messages.emailNotFound}: ${email}`)
      if (row.isPrimary)
        throw new AppError('invalid', Messages.primaryNotDeletable, [{ field: 'emails', message: Messages.primaryNotDeletable }])
      return row
    })
    await store.deleteEmailsById(
      tx,
      rows.map((row) => row.id),
    )
  })
}

/**
 * The settings-page form: `_method=PRIMARY` with `id` makes that address of the caller primary;
 * anything else adds `email`. Throws as makePrimary / addEmails.
 */
export async function applyEmailForm(db: Database, user: UserRow, form: { method?: string; id?: number; email?: string }): Promise<void> {
  if (form.method === 'PRIMARY') await makePrimary(db, user, form.id ?? 0)
  else await addEmails(db, user, [form.email ?? ''])
}

/** Deletes the caller's address `id`. Throws notFound (not the caller's) or invalid (primary). */
export async function deleteEmailById(db: Database, user: UserRow, id: number): Promise<void> {
  await db.write(async (tx) => {
    const row = await store.findEmailOfUser(tx, user.id, id)
    if (!row) throw new AppError('notFound', Messages.emailNotFound)
    if (row.isPrimary) throw new AppError('invalid', Messages.primaryNotDeletable, [{ field: 'id', message: Messages.primaryNotDeletable }])
    await store.deleteEmailsById(tx, [row.id])
  })
}

/** Makes the caller's activated address `id` primary. Throws notFound (not the caller's) or invalid. */
async function makePrimary(db: Database, user: UserRow, id: number): Promise<void> {
  await db.write(async (tx) => {
    const row = await store.findEmailOfUser(tx, user.id, id)
    if (!row) throw new AppError('notFound', Messages.emailNotFound)
    if (!row.isActivated)
      throw new AppError('invalid', Messages.primaryNotActivated, [{ field: 'id', message: Messages.primaryNotActivated }])
    await store.setPrimaryEmail(tx, user.id, row)
  })
}

/** The caller's address equal to `email` (case-insensitively), or undefined. */
export async function findOwnEmail(db: Database, user: UserRow, email: string): Promise<store.EmailRow | undefined> {
  return (await store.listEmailsOfUser(db.read, user.id)).find((row) => row.lowerEmail === email.trim().toLowerCase())
}

/**
 * Makes sure the account's primary email is recorded as its own before a session starts. An
 * account whose `users.email` has no address row (written around `insertUser`, or an external
 * sign-in carrying its address) binds it now; when another account already holds that address
 * the sign-in is refused with conflict (409) rather than letting two accounts share it.
 */
export async function bindPrimaryEmail(db: Database, user: UserRow): Promise<void> {
  if (user.email === '') return
  const [held] = await store.findEmails(db.read, [user.email.toLowerCase()])
  if (held?.uid === user.id) return
  await db.write(async (tx) => {
    const [holder] = await store.findEmails(tx, [user.email.toLowerCase()])
    if (!holder) await store.insertPrimaryEmail(tx, user.id, user.email)
    else if (holder.uid !== user.id) throw new AppError('conflict', Messages.signInEmailConflict)
  })
}
