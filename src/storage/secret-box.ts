import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeKey } from '../config'

/** Encrypts secrets that must be replayed later (cluster, cloud, SSO, message-bus) with AES-256-GCM. */
export interface SecretBox {
  seal(plaintext: string): Promise<string>
  open(sealed: string): Promise<string>
}

const VERSION = 'v1'

export async function secretBox(rawKey: Uint8Array): Promise<SecretBox> {
  const key = await crypto.subtle.importKey('raw', Uint8Array.from(rawKey), 'AES-GCM', false, ['encrypt', 'decrypt'])
  return {
    async seal(plaintext) {
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(plaintext)))
      return `${VERSION}.${Buffer.from(iv).toString('base64url')}.${Buffer.from(sealed).toString('base64url')}`
    },
    async open(text) {
      const [version, iv, sealed] = text.split('.')
      if (version !== VERSION || !iv || !sealed) throw new Error('sealed secret has an unknown format')
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: Buffer.from(iv, 'base64url') },
        key,
        Buffer.from(sealed, 'base64url'),
      )
      return new TextDecoder().decode(plain)
    },
  }
}

/** The configured key, or the one generated into the data dir on first start (mode 0600). */
export function loadOrCreateKey(configured: string | undefined, dataDir: string): Uint8Array {
  if (configured !== undefined) {
    const key = decodeKey(configured)
    if (!key) throw new Error('PLATFORM_SECRET_KEY is not a 32-byte key')
    return key
  }
  const path = join(dataDir, 'secret.key')
  if (existsSync(path)) {
    const key = decodeKey(readFileSync(path, 'utf8'))
    if (!key) throw new Error(`${path} does not hold a 32-byte key`)
    return key
  }
  mkdirSync(dataDir, { recursive: true })
  const key = crypto.getRandomValues(new Uint8Array(32))
  writeFileSync(path, `${Buffer.from(key).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  return key
}
