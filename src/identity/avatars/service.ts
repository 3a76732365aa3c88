import type { Deps } from '../../deps'
import { AppError } from '../../http/errors'
import { isEmailAddress } from '../service'
import * as store from '../store'
import { identiconSvg } from './identicon'
import { MAX_AVATAR_BYTES, Messages as StoreMessages, readAvatar, removeAvatar, saveAvatar } from './store'

export const Messages = {
  ...StoreMessages,
  avatarLinkInvalid: 'avatar_link must be an http(s) URL or an email address',
  nothingToChange: 'send an avatar file or an avatar_link',
  avatarNotFound: 'no such user or organization',
} as const

export interface AvatarSetting {
  /** local: an uploaded image; lookup: the external avatar_link; default: the generated identicon. */
  source: 'local' | 'lookup' | 'default'
  avatar_link: string
  federavatar: boolean
}

export function avatarSetting(user: store.UserRow): AvatarSetting {
  const source = user.avatar !== '' ? 'local' : user.avatarLink !== '' ? 'lookup' : 'default'
  return { source, avatar_link: user.avatarLink, federavatar: false }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && text.length <= 1024
  } catch {
    return false
  }
}

/**
 * Sets the account's avatar: an uploaded image (checked by magic bytes, at most 1 MiB, stored
 * as uploaded) or an external link (http(s) URL or email). Throws invalid.
 */
export async function updateAvatar(deps: Deps, user: store.UserRow, input: { avatar?: File; avatar_link?: string }): Promise<void> {
  if (input.avatar && input.avatar.size > 0) {
    if (input.avatar.size > MAX_AVATAR_BYTES) throw new AppError('invalid', Messages.avatarTooLarge, [{ field: 'avatar', message: Messages.avatarTooLarge }])
    const fileName = await saveAvatar(deps.config.dataDir, `user-${user.id}`, new Uint8Array(await input.avatar.arrayBuffer()))
    await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: fileName, avatarLink: '' }))
    if (user.avatar !== fileName) await removeAvatar(deps.config.dataDir, user.avatar)
    return
  }
  const link = input.avatar_link?.trim() ?? ''
  if (link === '') throw new AppError('invalid', Messages.nothingToChange, [{ field: 'avatar', message: Messages.nothingToChange }])
  if (!isHttpUrl(link) && !isEmailAddress(link))
    throw new AppError('invalid', Messages.avatarLinkInvalid, [{ field: 'avatar_link', message: Messages.avatarLinkInvalid }])
  await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: '', avatarLink: link }))
  await removeAvatar(deps.config.dataDir, user.avatar)
}

/** Back to the generated default: the stored image and the link are dropped. */
export async function deleteAvatar(deps: Deps, user: store.UserRow): Promise<void> {
  await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: '', avatarLink: '' }))
  await removeAvatar(deps.config.dataDir, user.avatar)
}

export type AvatarImage =
  | { kind: 'image'; bytes: Uint8Array | string; type: string; etag: string }
  | { kind: 'redirect'; location: string }

const etagOf = (data: Uint8Array | string) => `"${new Bun.CryptoHasher('sha256').update(data).digest('hex').slice(0, 32)}"`

/**
 * The avatar of account `name` (user or organization): the stored image, a redirect to the
 * external link (an email goes to Gravatar's SHA-256 address), or a generated identicon.
 * Throws notFound for an unknown name.
 */
export async function avatarImage(deps: Deps, name: string): Promise<AvatarImage> {
  const account = await store.findAccountByName(deps.db.read, name)
  if (!account) throw new AppError('notFound', Messages.avatarNotFound)
  if (account.avatar !== '') {
    const stored = await readAvatar(deps.config.dataDir, account.avatar)
    if (stored) return { kind: 'image', bytes: stored.bytes, type: stored.type, etag: etagOf(stored.bytes) }
  }
  if (account.avatarLink !== '') {
    if (isHttpUrl(account.avatarLink)) return { kind: 'redirect', location: account.avatarLink }
    const hash = new Bun.CryptoHasher('sha256').update(account.avatarLink.trim().toLowerCase()).digest('hex')
    return { kind: 'redirect', location: `https://gravatar.com/avatar/${hash}?d=identicon` }
  }
  const svg = identiconSvg(account.lowerName)
  return { kind: 'image', bytes: svg, type: 'image/svg+xml', etag: etagOf(svg) }
}
