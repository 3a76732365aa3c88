import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { AppError } from '../http/errors'

/** Gitea's default AVATAR_MAX_FILE_SIZE. */
export const MAX_AVATAR_BYTES = 1024 * 1024

export const Messages = {
  notAnImage: 'the avatar must be a PNG, JPEG, GIF or WebP image',
  tooLarge: `the avatar must be at most ${MAX_AVATAR_BYTES} bytes`,
  empty: 'no avatar file was sent',
} as const

const KINDS = [
  { ext: 'png', type: 'image/png', test: (b: Uint8Array) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { ext: 'jpg', type: 'image/jpeg', test: (b: Uint8Array) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { ext: 'gif', type: 'image/gif', test: (b: Uint8Array) => ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a' },
  { ext: 'webp', type: 'image/webp', test: (b: Uint8Array) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP' },
] as const

const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((m, i) => bytes[i] === m)
const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to))
const STORED_NAME = /^[a-z0-9-]+\.(png|jpg|gif|webp)$/

const avatarDir = (dataDir: string) => join(dataDir, 'avatars')

/**
 * Stores an avatar image under the data dir and returns its file name. The type is decided by
 * the file's magic bytes, never by what the client claims. Throws invalid (empty, too large, not
 * an image). `key` names the owner (letters, digits, dashes), e.g. `org-12`.
 */
export function saveAvatar(dataDir: string, key: string, bytes: Uint8Array): string {
  if (bytes.length === 0) throw new AppError('invalid', Messages.empty, [{ field: 'avatar', message: Messages.empty }])
  if (bytes.length > MAX_AVATAR_BYTES) throw new AppError('invalid', Messages.tooLarge, [{ field: 'avatar', message: Messages.tooLarge }])
  const kind = KINDS.find((k) => k.test(bytes))
  if (!kind) throw new AppError('invalid', Messages.notAnImage, [{ field: 'avatar', message: Messages.notAnImage }])
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')
  const name = `${key.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${random}.${kind.ext}`
  mkdirSync(avatarDir(dataDir), { recursive: true })
  writeFileSync(join(avatarDir(dataDir), name), bytes)
  return name
}

/** Removes a stored avatar; a missing file or a name this store never made is ignored. */
export function deleteAvatar(dataDir: string, name: string): void {
  if (STORED_NAME.test(name)) rmSync(join(avatarDir(dataDir), name), { force: true })
}

/** The bytes and content type of a stored avatar, or undefined. */
export function readAvatar(dataDir: string, name: string): { bytes: Uint8Array<ArrayBuffer>; type: string } | undefined {
  if (!STORED_NAME.test(name)) return undefined
  const path = join(avatarDir(dataDir), name)
  if (!existsSync(path)) return undefined
  const bytes = new Uint8Array(readFileSync(path))
  const kind = KINDS.find((k) => k.test(bytes))
  return kind ? { bytes, type: kind.type } : undefined
}
