import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AppError } from '../../errors'

/**
 * Avatar files of users and organizations, under `<dataDir>/avatars/`. Files are stored as
 * uploaded (after the type and size checks): resizing would need a native image library.
 */
export const MAX_AVATAR_BYTES = 1024 * 1024

export const Messages = {
  avatarTooLarge: `avatar larger than ${MAX_AVATAR_BYTES} bytes`,
  avatarNotImage: 'avatar must be a PNG, JPEG, GIF or WebP image',
} as const

export type AvatarType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'
const EXTENSION: Record<AvatarType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' }
const TYPE_OF_EXTENSION = Object.fromEntries(Object.entries(EXTENSION).map(([type, ext]) => [ext, type])) as Record<string, AvatarType>

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) => prefix.every((b, i) => bytes[at + i] === b)

/** The image type by magic bytes (never by the client's Content-Type or file name), or undefined. */
function sniffImageType(bytes: Uint8Array): AvatarType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png'
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif'
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp'
  return undefined
}

const directory = (dataDir: string) => join(dataDir, 'avatars')

/**
 * Checks and stores an avatar for `key` (e.g. `user-12`, `org-7`); returns the stored file name
 * (which changes with the content, so URLs and ETags follow). Throws invalid (too large, not an image).
 */
export async function saveAvatar(dataDir: string, key: string, bytes: Uint8Array): Promise<string> {
  if (bytes.byteLength > MAX_AVATAR_BYTES)
    throw new AppError('invalid', Messages.avatarTooLarge, [{ field: 'avatar', message: Messages.avatarTooLarge }])
  const type = sniffImageType(bytes)
  if (!type) throw new AppError('invalid', Messages.avatarNotImage, [{ field: 'avatar', message: Messages.avatarNotImage }])
  if (!/^[a-z0-9-]{1,64}$/.test(key)) throw new Error(`avatar key "${key}" is not a plain name`)
  const digest = new Bun.CryptoHasher('sha256').update(bytes).digest('hex').slice(0, 16)
  const fileName = `${key}-${digest}.${EXTENSION[type]}`
  await mkdir(directory(dataDir), { recursive: true })
  const temp = join(directory(dataDir), `.${fileName}.${crypto.randomUUID()}`)
  await writeFile(temp, bytes)
  await rename(temp, join(directory(dataDir), fileName))
  return fileName
}

/** The stored bytes and type of `fileName`, or undefined when it is gone. */
export async function readAvatar(dataDir: string, fileName: string): Promise<{ bytes: Uint8Array; type: AvatarType } | undefined> {
  const type = TYPE_OF_EXTENSION[fileName.split('.').pop() ?? '']
  if (!type || !/^[a-z0-9-]+\.[a-z]+$/.test(fileName)) return undefined
  try {
    return { bytes: new Uint8Array(await readFile(join(directory(dataDir), fileName))), type }
  } catch {
    return undefined
  }
}

/** Removes a stored avatar file; a missing file is fine. */
export async function removeAvatar(dataDir: string, fileName: string): Promise<void> {
  if (fileName === '' || !/^[a-z0-9-]+\.[a-z]+$/.test(fileName)) return
  await rm(join(directory(dataDir), fileName), { force: true })
}
