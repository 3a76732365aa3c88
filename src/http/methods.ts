import { AppError } from '../errors'

/** The methods the platform serves: its routes', and the Kubernetes verbs the cluster proxy relays. */
const SERVED_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
const SERVED: ReadonlySet<string> = new Set(SERVED_METHODS)

export const MethodMessages = {
  notServed: (method: string) => `${method} is not a method this server serves`,
} as const

/**
 * The refusal of a method outside SERVED_METHODS (405, `Allow` naming them); undefined for one it
 * serves. Only methods in Bun's own table get here: for any other token (`FOO`, a lower-case
 * `get`) Bun closes the connection without an answer before the app sees the request
 * (docs/security.md).
 */
export function unservedMethod(method: string): AppError | undefined {
  if (SERVED.has(method)) return undefined
  return new AppError('methodNotAllowed', MethodMessages.notServed(method), [], { allow: SERVED_METHODS.join(', ') })
}

/** Throws unservedMethod's refusal. */
export function assertServedMethod(method: string): void {
  const refusal = unservedMethod(method)
  if (refusal) throw refusal
}
