import type { MaybePromise } from '../maybe-promise'
import type { Actor } from './actor'

/** A request's credential as sent, before it is checked; `http/auth.ts` reads it off the request. */
export type PresentedCredential =
  | { kind: 'bearer'; value: string }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'session'; value: string }
  | { kind: 'none' }

/** What else of the request checking a credential needs. */
export interface CredentialContext {
  method: string
  /** The X-Csrf-Token header and the _csrf cookie, compared with the session's on unsafe methods. */
  csrfHeader: string | null
  csrfCookie: string | undefined
  /** The second factor sent with a Basic password sign-in. */
  otp: string | null
  /** The user an admin impersonates (`sudo` query or header). */
  sudo: string | null
  /** The client address, the sign-in limiter's key; asked only for password sign-ins (it costs a syscall). */
  address: () => string
}

/**
 * Resolves who a request acts as (`identity/authenticate.ts`, handed to `http/` through Deps):
 * undefined for anonymous callers; a credential that is present but invalid throws unauthenticated. A token
 * this process signed in since the last commit is answered at once, without a promise.
 */
export type CheckCredential = (presented: PresentedCredential, context: CredentialContext) => MaybePromise<Actor | undefined>
