import { existsSync } from 'node:fs'
import { readdir, readFile, rm, rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { avatarImages } from '../../../db/schema/shared-files'
import { AppError } from '../../errors'
import type { Database, Executor } from '../../storage/database'

/**
 * Avatars of users and organizations, in the database so that every process and machine sharing
 * it serves them. Stored as uploaded (after the type and size checks): resizing would need a
 * native image library.
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

/**
 * Checks and stores an avatar for `key` (e.g. `user-12`, `org-7`); returns the stored name
 * (which changes with the content, so URLs and ETags follow). Throws invalid (too large, not an image).
 */
export async function saveAvatar(db: Database, key: string, bytes: Uint8Array): Promise<string> {
  if (bytes.byteLength > MAX_AVATAR_BYTES)
    throw new AppError('invalid', Messages.avatarTooLarge, [{ field: 'avatar', message: Messages.avatarTooLarge }])
  const type = sniffImageType(bytes)
  if (!type) throw new AppError('invalid', Messages.avatarNotImage, [{ field: 'avatar', message: Messages.avatarNotImage }])
  if (!/^[a-z0-9-]{1,64}$/.test(key)) throw new Error(`avatar key "${key}" is not a plain name`)
  const digest = new Bun.CryptoHasher('sha256').update(bytes).digest('hex').slice(0, 16)
  const name = `${key}-${digest}.${EXTENSION[type]}`
  await db.write((tx) => insertImage(tx, name, bytes))
  return name
}

const insertImage = (tx: Executor, name: string, bytes: Uint8Array) =>
  tx
    .insert(avatarImages)
    .values({ name, bytes: Buffer.from(bytes) })
    .onConflictDoNothing()

const STORED_NAME = /^[a-z0-9-]+\.[a-z]+$/

/** The stored bytes and type of `name`, or undefined when it is gone. */
export async function readAvatar(db: Executor, name: string): Promise<{ bytes: Uint8Array; type: AvatarType } | undefined> {
  const type = TYPE_OF_EXTENSION[name.split('.').pop() ?? '']
  if (!type || !STORED_NAME.test(name)) return undefined
  const [row] = await db.select({ bytes: avatarImages.bytes }).from(avatarImages).where(eq(avatarImages.name, name))
  return row ? { bytes: new Uint8Array(row.bytes), type } : undefined
}

/** Removes a stored avatar; a missing one is fine. */
export async function removeAvatar(db: Database, name: string): Promise<void> {
  if (name === '') return
  await db.write(async (tx) => {
    await tx.delete(avatarImages).where(eq(avatarImages.name, name))
  })
}

/**
 * Moves avatar files an earlier version kept in `<dataDir>/avatars/` into the database (each file
 * deleted once its row is committed), so an upgraded server keeps serving them. Run at start.
 */
export async function importAvatarFiles(db: Database, dataDir: string): Promise<number> {
  const directory = join(dataDir, 'avatars')
  if (!existsSync(directory)) return 0
  let moved = 0
  for (const name of await readdir(directory)) {
    if (!STORED_NAME.test(name) || !TYPE_OF_EXTENSION[name.split('.').pop() ?? '']) continue
    const file = join(directory, name)
    const bytes = new Uint8Array(await readFile(file))
    await db.write((tx) => insertImage(tx, name, bytes))
    await rm(file)
    moved++
  }
  // Gone once empty (half-written files of the old version, named with a leading dot, keep it).
  await rmdir(directory).catch(() => undefined)
  return moved
}
