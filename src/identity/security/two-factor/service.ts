import { generateSecret, generateURI, verify } from 'otplib'
import QRCode from 'qrcode'
import { nowSeconds } from '../../../clock'
import type { Deps } from '../../../deps'
import { AppError } from '../../../errors'
import type { UserRow } from '../../store'
import { sameDigest, sha256Hex } from '../../tokens/secrets'
import { hasSecurityKey } from '../webauthn/service'
import { listCredentials } from '../webauthn/store'
import * as store from './store'

export const Messages = {
  alreadyEnrolled: 'two-factor authentication is already enrolled',
  notEnrolled: 'two-factor authentication is not enrolled',
  noPendingEnrollment: 'no enrollment in progress: GET /user/settings/security/twofa/enroll first',
  wrongPasscode: 'the passcode is wrong or was already used',
  locked: 'too many wrong two-factor codes; try again later',
  otpMissing: 'this account uses two-factor authentication: send a current code in the X-Platform-OTP header',
  otpInvalid: 'invalid provided OTP',
  securityKeyBasic: 'this account signs in with a security key, which Basic authentication cannot carry: use an access token',
} as const

/** Wrong codes in a row before the factor locks, and for how long. */
export const MAX_FAILED_CODES = 5
export const LOCK_SECONDS = 5 * 60
/** How long a shown-but-unconfirmed secret stays usable. */
const ENROLLMENT_TTL_SECONDS = 10 * 60
/** One step either side of now (30 s periods), as Gitea accepts. */
const TOLERANCE_SECONDS = 30

const PERIOD_SECONDS = 30

/** The time step `code` belongs to when it is a current code of `secret` at `epoch` (seconds), else undefined. */
async function matchedStep(secret: string, code: string, epoch: number): Promise<number | undefined> {
  const result = await verify({ secret, token: code, epoch, epochTolerance: TOLERANCE_SECONDS })
  return result.valid ? Math.floor(epoch / PERIOD_SECONDS) + result.delta : undefined
}

/** A 10-character recovery token; like Gitea's scratch token, shown once and only its hash kept. */
function newScratchToken(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789'
  return Array.from(crypto.getRandomValues(new Uint8Array(10)), (b) => alphabet[b % alphabet.length]).join('')
}

const tooMany = (until: number, now: number) =>
  new AppError('tooManyRequests', Messages.locked, [], { 'retry-after': String(Math.max(1, until - now)) })

export async function twoFactorStatus(deps: Deps, uid: number) {
  const [factor, keys] = await Promise.all([store.findTwoFactor(deps.db.read, uid), listCredentials(deps.db.read, uid)])
  return { twofaEnrolled: factor !== undefined, webauthnEnrolled: keys.length > 0, scratchTokenSet: (factor?.scratchHash ?? '') !== '' }
}

/** Starts TOTP enrollment: a new secret kept server-side (sealed) and its QR code. Throws invalid when already enrolled. */
export async function startEnrollment(deps: Deps, user: UserRow): Promise<{ secret: string; qrImage: string; qrSvg: string }> {
  if (await store.findTwoFactor(deps.db.read, user.id)) throw new AppError('invalid', Messages.alreadyEnrolled)
  const secret = generateSecret()
  const sealedSecret = await deps.secrets.seal(secret)
  await deps.db.write((tx) =>
    store.replaceEnrollment(tx, { uid: user.id, sealedSecret, expiresAt: nowSeconds(deps.clock) + ENROLLMENT_TTL_SECONDS }),
  )
  const uri = generateURI({ issuer: new URL(deps.config.publicUrl).host, label: user.name, secret })
  return {
    secret,
    qrImage: await QRCode.toDataURL(uri, { errorCorrectionLevel: 'M' }),
    qrSvg: await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M' }),
  }
}

/**
 * Finishes enrollment with a code from the new secret and returns the scratch token (once).
 * Throws invalid (no enrollment, wrong code, already enrolled) or tooManyRequests.
 */
export async function finishEnrollment(deps: Deps, uid: number, passcode: string): Promise<string> {
  const pending = await store.findEnrollment(deps.db.read, uid)
  const now = nowSeconds(deps.clock)
  if (!pending || pending.expiresAt <= now) {
    if (await store.findTwoFactor(deps.db.read, uid)) throw new AppError('invalid', Messages.alreadyEnrolled)
    throw new AppError('invalid', Messages.noPendingEnrollment)
  }
  if (pending.failedAttempts >= MAX_FAILED_CODES) throw new AppError('tooManyRequests', Messages.locked)
  const secret = await deps.secrets.open(pending.sealedSecret)
  const step = await matchedStep(secret, passcode, now)
  if (step === undefined) {
    await deps.db.write((tx) => store.countEnrollmentFailure(tx, pending.id))
    throw new AppError('invalid', Messages.wrongPasscode, [{ field: 'passcode', message: 'is not a current code of the new secret' }])
  }
  const scratch = newScratchToken()
  const done = await deps.db.write((tx) => store.completeEnrollment(tx, pending, { scratchHash: sha256Hex(scratch), lastUsedStep: step }))
  if (!done) throw new AppError('invalid', Messages.noPendingEnrollment)
  return scratch
}

/** Replaces the scratch token and returns the new one. Throws invalid when not enrolled. */
export async function regenerateScratch(deps: Deps, uid: number): Promise<string> {
  const scratch = newScratchToken()
  const ok = await deps.db.write((tx) => store.setScratchHash(tx, uid, sha256Hex(scratch)))
  if (!ok) throw new AppError('invalid', Messages.notEnrolled)
  return scratch
}

/** Turns TOTP off (and drops an unfinished enrollment); idempotent. */
export async function disableTwoFactor(deps: Deps, uid: number): Promise<void> {
  await deps.db.write((tx) => store.deleteTwoFactor(tx, uid))
}

/**
 * The second factor of a Basic password sign-in: for enrolled users `code` must be a current TOTP
 * code not used before, or the scratch token (which then stops working). Wrong codes count towards
 * a lock. Users with only a security key cannot give it here (unauthenticated). Throws
 * unauthenticated or tooManyRequests; users without a second factor pass.
 */
export async function checkSecondFactor(deps: Deps, uid: number, code: string | null): Promise<void> {
  const factor = await store.findTwoFactor(deps.db.read, uid)
  if (!factor) {
    if (await hasSecurityKey(deps, uid)) throw new AppError('unauthenticated', Messages.securityKeyBasic)
    return
  }
  const now = nowSeconds(deps.clock)
  if (factor.lockedUntil > now) throw tooMany(factor.lockedUntil, now)
  if (!code) throw new AppError('unauthenticated', Messages.otpMissing)
  if (await acceptCode(deps, factor, code.trim(), now)) return
  const lockUntil = now + LOCK_SECONDS
  await deps.db.write((tx) => store.countFailure(tx, uid, MAX_FAILED_CODES, lockUntil))
  throw new AppError('unauthenticated', Messages.otpInvalid)
}

async function acceptCode(deps: Deps, factor: store.TwoFactorRow, code: string, now: number): Promise<boolean> {
  if (/^\d{6}$/.test(code)) {
    const secret = await deps.secrets.open(factor.sealedSecret)
    const step = await matchedStep(secret, code, now)
    // Consumed inside the write queue: of two requests with one code, exactly one gets here first.
    return step !== undefined && deps.db.write((tx) => store.consumeStep(tx, factor.uid, step))
  }
  const digest = sha256Hex(code)
  if (factor.scratchHash === '' || !sameDigest(factor.scratchHash, digest)) return false
  return deps.db.write((tx) => store.consumeScratch(tx, factor.uid, digest))
}
