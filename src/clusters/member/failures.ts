import { AppError } from '../../errors'
import { EgressRefused } from '../../net/egress'
import { AnswerTooLarge, BudgetExhausted } from '../../net/http1/answer'
import { Malformed } from '../../net/http1/parser'
import { ClientGone } from '../../net/http1/pool'
import { UnsafeRequest } from '../../net/http1/request'

export const MemberMessages = {
  malformed: (cluster: string, why: string) => `cluster "${cluster}" answered with a malformed HTTP response (${why})`,
  badRequestHeader: 'a header for the member carries a line break or control character',
  clientGone: (cluster: string) => `the client went away before cluster "${cluster}" answered`,
  notJson: (cluster: string, path: string) => `cluster "${cluster}" answered ${path} with something that is not JSON`,
  status: (cluster: string, status: number, path: string) => `cluster "${cluster}" answered ${status} for ${path}`,
  tooLarge: (cluster: string, limit: number) =>
    `cluster "${cluster}" answered more than ${Math.floor(limit / (1024 * 1024))} MiB, more than the platform holds for one call it must read whole`,
  busy: 'the platform is holding as many cluster answers as it may right now; retry shortly',
  metadataAddress: (cluster: string) => `cluster "${cluster}" may not be reached: its server is a cloud metadata address`,
  privateAddress: (cluster: string) =>
    `cluster "${cluster}" may not be reached: its server is a private or local address and PLATFORM_ALLOW_PRIVATE_ENDPOINTS is off`,
} as const

/** A connection the egress policy refused, in the cluster's words (its address and host name stay out). */
function refusal(clusterName: string, error: EgressRefused): AppError {
  if (error.kind === 'metadata') return new AppError('upstream', MemberMessages.metadataAddress(clusterName))
  if (error.kind === 'private') return new AppError('upstream', MemberMessages.privateAddress(clusterName))
  if (error.kind === 'unresolved') return networkFailure(clusterName, { code: 'ENOTFOUND' })
  return new AppError('upstream', `cluster "${clusterName}" may not be reached: ${error.reason}`)
}

/** What a failed connection means, by the error code the socket reports, in words a person can act on. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'refused the connection (is the API server running on that port?)',
  ENOTFOUND: 'could not be found: its host name does not resolve (DNS)',
  EAI_AGAIN: 'could not be found: DNS did not answer',
  ECONNRESET: 'closed the connection',
  EPROTO: 'broke off the TLS handshake (does it want a client certificate, or is it not TLS?)',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'presented a TLS certificate that the configured certificate authority did not sign',
  SELF_SIGNED_CERT_IN_CHAIN: 'presented a TLS certificate that the configured certificate authority did not sign',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'presented a self-signed TLS certificate that is not the configured certificate authority',
  ERR_TLS_CERT_ALTNAME_INVALID: 'presented a TLS certificate for another name (set tlsServerName to the name it was issued for)',
  CERT_HAS_EXPIRED: 'presented an expired TLS certificate',
}

/** The TLS error codes of NETWORK_REASONS: the caller may want to show the certificate's subject. */
export const isTlsFailure = (error: AppError) => error.message.includes('TLS certificate')

/** A connection that failed or timed out, as `upstream` naming the cluster (never its address or credential). */
const networkFailure = (clusterName: string, error: unknown) => {
  const code = (error as { code?: unknown }).code
  const reason =
    error instanceof Error && error.name === 'TimeoutError'
      ? 'did not answer in time'
      : (typeof code === 'string' && NETWORK_REASONS[code]) || 'could not be reached'
  return new AppError('upstream', `cluster "${clusterName}" ${reason}`)
}

/** Any failure of a member call in the platform's words: upstream, invalid (a header that cannot be written), clientClosed. */
export function memberFailure(clusterName: string, error: unknown): AppError {
  if (error instanceof AppError) return error
  if (error instanceof EgressRefused) return refusal(clusterName, error)
  if (error instanceof AnswerTooLarge) return new AppError('upstream', MemberMessages.tooLarge(clusterName, error.limit))
  if (error instanceof BudgetExhausted) return new AppError('unavailable', MemberMessages.busy, [], { 'retry-after': '1' })
  if (error instanceof Malformed) return new AppError('upstream', MemberMessages.malformed(clusterName, error.message))
  if (error instanceof ClientGone) return new AppError('clientClosed', MemberMessages.clientGone(clusterName))
  if (error instanceof UnsafeRequest) return new AppError('invalid', MemberMessages.badRequestHeader)
  return networkFailure(clusterName, error)
}
