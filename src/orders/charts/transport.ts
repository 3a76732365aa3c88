import { AppError } from '../../errors'
import { type EgressPolicy, EgressRefused, egressFetch } from '../../net/egress'

/**
 * The one way the chart client talks to a registry: through the egress guard (private addresses
 * only with PLATFORM_ALLOW_PRIVATE_REGISTRIES), with the source's CA, a timeout, a size cap on
 * every body, and redirects followed by hand so each hop is checked and credentials never travel
 * to another host. Failures become `upstream` (502) naming the registry, never its credentials.
 */

export interface RegistryAccess {
  /** How errors name the registry: the source name and its URL's origin. */
  label: string
  username?: string
  password?: string
  caData?: string
  insecureSkipTlsVerify: boolean
  allowPrivate: boolean
  timeoutMs: number
}

const PRIVATE_REGISTRIES_SETTING = 'PLATFORM_ALLOW_PRIVATE_REGISTRIES'
const MAX_REDIRECTS = 5

export const registryPolicy = (access: Pick<RegistryAccess, 'allowPrivate'>): EgressPolicy => ({
  allowPrivate: access.allowPrivate,
  setting: PRIVATE_REGISTRIES_SETTING,
})

/** A registry failure a client sees as 502; the message names the registry and what went wrong. */
export function registryFailure(access: RegistryAccess, what: string): AppError {
  return new AppError('upstream', `chart registry ${access.label}: ${what}`)
}

export interface RegistryRequest {
  headers?: Record<string, string>
  method?: 'GET' | 'HEAD'
  /** Send the source's Basic credentials (only ever to the URL's own host). */
  basicAuth?: boolean
  /**
   * The one host the credentials may go to, when it is not the URL's own: an archive the index
   * lists on another host gets none, as Helm does without pass_credentials.
   */
  credentialHost?: string
}

/** GET (or HEAD) `url`, following up to five redirects; throws invalid for a refused address, upstream for network failures. */
export async function registryFetch(access: RegistryAccess, url: URL, request: RegistryRequest = {}): Promise<Response> {
  let target = url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const headers = new Headers(request.headers)
    const sameHost = target.host === (request.credentialHost ?? url.host)
    if (!sameHost) headers.delete('authorization')
    else if (request.basicAuth && access.username !== undefined)
      headers.set('authorization', `Basic ${Buffer.from(`${access.username}:${access.password ?? ''}`).toString('base64')}`)
    let response: Response
    try {
      response = await egressFetch(
        target,
        {
          method: request.method ?? 'GET',
          headers,
          signal: AbortSignal.timeout(access.timeoutMs),
          tls: { ca: access.caData || undefined, rejectUnauthorized: !access.insecureSkipTlsVerify },
        },
        registryPolicy(access),
      )
    } catch (error) {
      if (error instanceof EgressRefused) throw new AppError('invalid', `chart registry ${access.label}: ${error.message}`)
      throw registryFailure(access, networkReason(error))
    }
    const location = response.headers.get('location')
    if (response.status < 300 || response.status >= 400 || !location) return response
    await response.body?.cancel()
    target = new URL(location, target)
  }
  throw registryFailure(access, `more than ${MAX_REDIRECTS} redirects`)
}

function networkReason(error: unknown): string {
  const name = (error as { name?: string }).name
  if (name === 'TimeoutError' || name === 'AbortError') return 'did not answer in time'
  const code = (error as { code?: string }).code
  return `is unreachable (${code ?? (error instanceof Error ? error.message.split('\n')[0] : 'network error')})`
}

/** The whole body, refusing more than `maxBytes` (checked as it streams, not after). */
export async function readCapped(access: RegistryAccess, response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN)
  if (declared > maxBytes) {
    await response.body?.cancel()
    throw new AppError('invalid', `chart registry ${access.label}: the ${what} is larger than ${maxBytes} bytes`)
  }
  const chunks: Uint8Array[] = []
  let total = 0
  const reader = response.body?.getReader()
  try {
    for (let read = await reader?.read(); reader && read && !read.done; read = await reader.read()) {
      const chunk = read.value
      total += chunk.byteLength
      if (total > maxBytes) throw new AppError('invalid', `chart registry ${access.label}: the ${what} is larger than ${maxBytes} bytes`)
      chunks.push(chunk)
    }
  } catch (error) {
    await reader?.cancel().catch(() => undefined)
    if (error instanceof AppError) throw error
    throw registryFailure(access, `the ${what} download broke off (${networkReason(error)})`)
  }
  return Buffer.concat(chunks)
}

/** Throws upstream for a failing answer, naming the status (the body may echo secrets, so it is not shown). */
export async function expectOk(access: RegistryAccess, response: Response, what: string): Promise<void> {
  if (response.ok) return
  await response.body?.cancel()
  throw registryFailure(access, `answered ${response.status} for the ${what}`)
}
