import { isoCBOR } from '@simplewebauthn/server/helpers'

/**
 * A software security key for tests that need many registrations without a browser: it answers
 * creation options with an ES256 credential and a `none` attestation, as a real key would, and
 * lets a test say which origin it claims and tamper with the result.
 */
export async function softRegistration(publicKey: Record<string, unknown>, opts: { origin: string; rpId?: string }) {
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey)
  const cose = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Uint8Array.from(Buffer.from(jwk.x!, 'base64url'))],
    [-3, Uint8Array.from(Buffer.from(jwk.y!, 'base64url'))],
  ])
  const credentialId = crypto.getRandomValues(new Uint8Array(16))
  const rp = publicKey.rp as { id: string }
  const rpIdHash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(opts.rpId ?? rp.id)))
  const authData = Buffer.concat([
    rpIdHash,
    Buffer.from([0x41]), // user present + attested credential data
    Buffer.from([0, 0, 0, 0]),
    Buffer.alloc(16), // aaguid
    Buffer.from([0, credentialId.length]),
    credentialId,
    Buffer.from(isoCBOR.encode(cose)),
  ])
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', Uint8Array.from(authData)],
    ]) as never,
  )
  const clientDataJSON = JSON.stringify({
    type: 'webauthn.create',
    challenge: publicKey.challenge,
    origin: opts.origin,
    crossOrigin: false,
  })
  const id = Buffer.from(credentialId).toString('base64url')
  return {
    id,
    rawId: id,
    type: 'public-key' as const,
    response: {
      clientDataJSON: Buffer.from(clientDataJSON).toString('base64url'),
      attestationObject: Buffer.from(attestationObject).toString('base64url'),
      transports: ['usb'],
    },
    clientExtensionResults: {},
  }
}
