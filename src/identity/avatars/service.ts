import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { EgressRefused, egressFetch } from '../../net/egress'
import { isEmailAddress } from '../service'
import * as store from '../store'
import { identiconSvg } from './identicon'
import { MAX_AVATAR_BYTES, readAvatar, removeAvatar, Messages as StoreMessages, saveAvatar } from './store'

const Messages = {
  ...StoreMessages,
  avatarLinkInvalid: 'avatar_link must be an http(s) URL or an email address',
  nothingToChange: 'send an avatar file or an avatar_link',
  avatarNotFound: 'no such user or organization',
  avatarLinkUnreachable: (reason: string) => `avatar_link could not be fetched: ${reason}`,
} as const

export interface AvatarSetting {
  /** local: an uploaded image; lookup: the external avatar_link; default: the generated identicon. */
  source: 'local' | 'lookup' | 'default'
  avatar_link: string
  federavatar: boolean
}

export function avatarSetting(user: store.UserRow): AvatarSetting {
  const source = user.avatarLink !== '' ? 'lookup' : user.avatar !== '' ? 'local' : 'default'
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
 * The image at a user-given URL, fetched once through the egress guard (no redirect followed, at
 * most MAX_AVATAR_BYTES read, 10 s): the platform then serves its own copy, so its origin never
 * redirects to a host a user chose. Throws invalid.
 */
async function fetchAvatar(deps: Deps, link: string): Promise<Uint8Array> {
  const refuse = (reason: string): never => {
    throw new AppError('invalid', Messages.avatarLinkUnreachable(reason), [{ field: 'avatar_link', message: reason }])
  }
  let res: Response
  try {
    res = await egressFetch(link, { signal: AbortSignal.timeout(10_000) }, { allowPrivate: deps.config.allowPrivateEndpoints })
  } catch (error) {
    return refuse(error instanceof EgressRefused ? error.message : 'the host did not answer')
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    return refuse(
      res.status >= 300 && res.status < 400 ? "it answered with a redirect; give the image's own URL" : `it answered ${res.status}`,
    )
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body!.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength
    if (size > MAX_AVATAR_BYTES) {
      await reader.cancel()
      return refuse(Messages.avatarTooLarge)
    }
    chunks.push(read.value)
  }
  return Buffer.concat(chunks)
}

/**
 * Sets the account's avatar: an uploaded image (checked by magic bytes, at most 1 MiB, stored as
 * uploaded), an image URL (fetched once and stored the same way) or an email (Gravatar). Throws invalid.
 */
export async function updateAvatar(deps: Deps, user: store.UserRow, input: { avatar?: File; avatar_link?: string }): Promise<void> {
  const keep = async (bytes: Uint8Array, avatarLink: string) => {
    const fileName = await saveAvatar(deps.db, `user-${user.id}`, bytes)
    await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: fileName, avatarLink }))
    if (user.avatar !== fileName) await removeAvatar(deps.db, user.avatar)
  }
  if (input.avatar && input.avatar.size > 0) {
    if (input.avatar.size > MAX_AVATAR_BYTES)
      throw new AppError('invalid', Messages.avatarTooLarge, [{ field: 'avatar', message: Messages.avatarTooLarge }])
    return keep(new Uint8Array(await input.avatar.arrayBuffer()), '')
  }
  const link = input.avatar_link?.trim() ?? ''
  if (link === '') throw new AppError('invalid', Messages.nothingToChange, [{ field: 'avatar', message: Messages.nothingToChange }])
  if (isHttpUrl(link)) return keep(await fetchAvatar(deps, link), link)
  if (!isEmailAddress(link))
    throw new AppError('invalid', Messages.avatarLinkInvalid, [{ field: 'avatar_link', message: Messages.avatarLinkInvalid }])
  await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: '', avatarLink: link }))
  await removeAvatar(deps.db, user.avatar)
}

/** Back to the generated default: the stored image and the link are dropped. */
export async function deleteAvatar(deps: Deps, user: store.UserRow): Promise<void> {
  await deps.db.write((tx) => store.updateUser(tx, user.id, { avatar: '', avatarLink: '' }))
  await removeAvatar(deps.db, user.avatar)
}

export type AvatarImage = { kind: 'image'; bytes: Uint8Array | string; type: string; etag: string } | { kind: 'redirect'; location: string }

const etagOf = (data: Uint8Array | string) => `"${new Bun.CryptoHasher('sha256').update(data).digest('hex').slice(0, 32)}"`

/**
 * The avatar of account `name` (user or organization): the stored image (an uploaded one or the
 * copy of an image URL), a redirect to Gravatar for an email, or a generated identicon. The only
 * host it ever redirects to is Gravatar's. Throws notFound for an unknown name.
 */
export async function avatarImage(deps: Deps, name: string): Promise<AvatarImage> {
  const account = await store.findAccountByName(deps.db.read, name)
  if (!account) throw new AppError('notFound', Messages.avatarNotFound)
  if (account.avatar !== '') {
    const stored = await readAvatar(deps.db.read, account.avatar)
    if (stored) return { kind: 'image', bytes: stored.bytes, type: stored.type, etag: etagOf(stored.bytes) }
  }
  if (account.avatarLink !== '' && isEmailAddress(account.avatarLink)) {
    const hash = new Bun.CryptoHasher('sha256').update(account.avatarLink.trim().toLowerCase()).digest('hex')
    return { kind: 'redirect', location: `https://gravatar.com/avatar/${hash}?d=identicon` }
  }
  const svg = identiconSvg(account.lowerName)
  return { kind: 'image', bytes: svg, type: 'image/svg+xml', etag: etagOf(svg) }
}
