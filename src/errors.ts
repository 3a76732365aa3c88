/**
 * The one error model services, stores and the authz table throw. It knows nothing of HTTP:
 * `http/errors.ts` alone maps each kind to a status and renders the error body.
 */
export type ErrorKind =
  | 'badRequest'
  | 'invalid'
  | 'duplicate'
  | 'unauthenticated'
  | 'forbidden'
  | 'notFound'
  | 'methodNotAllowed'
  | 'requestTimeout'
  | 'conflict'
  | 'lengthRequired'
  | 'payloadTooLarge'
  | 'unsupportedMediaType'
  | 'tooManyRequests'
  | 'clientClosed'
  | 'internal'
  | 'upstream'
  | 'unavailable'

export interface FieldError {
  field: string
  message: string
}

/** A failure a client can act on. `headers` carry what the answer needs beside the body, e.g. Retry-After. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/** What a caught value says: its message when it is an Error, else itself as text. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))
