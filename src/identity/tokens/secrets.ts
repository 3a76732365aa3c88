import { timingSafeEqual } from 'node:crypto'

/** 40 lowercase hex characters from 20 random bytes (docs/decisions.md §1). */
export function newAccessToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString('hex')
}

export function sha256Hex(text: string): string {
  return Bun.SHA256.hash(text, 'hex')
}

/** Compares two hex digests in constant time. */
export function sameDigest(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
}

export const looksLikeAccessToken = (text: string) => /^[0-9a-f]{40}$/.test(text)
