import { generate } from 'otplib'

/** A TOTP code of the step after the current one: valid (±1 step) and not yet used by enrollment. */
export const nextCode = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 })
