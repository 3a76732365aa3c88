import { XMLParser } from 'fast-xml-parser'
import { AppError } from '../../errors'
import { type EgressInit, type EgressPolicy, EgressRefused, egressFetch } from '../../net/egress'

/** Requests to a provider give up after this long. */
const PROVIDER_TIMEOUT_MS = 15_000

/**
 * Sends one request to a provider through the egress guard. A refused endpoint is `invalid` (the
 * caller gave it), a network failure or a non-2xx answer is `upstream` naming the provider and
 * its error code, never a key. Returns the body text of a 2xx answer.
 */
export async function providerRequest(provider: string, url: string, init: EgressInit, policy: EgressPolicy): Promise<string> {
  let res: Response
  try {
    res = await egressFetch(url, { ...init, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) }, policy)
  } catch (error) {
    if (error instanceof EgressRefused) throw new AppError('invalid', `${provider} endpoint is not allowed: ${error.message}`)
    const reason = error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached'
    throw new AppError('upstream', `${provider} ${reason} at ${new URL(url).host}`)
  }
  const body = await res.text().catch(() => '')
  if (res.status >= 300) throw new AppError('upstream', `${provider} refused the request: ${res.status} ${errorCodeOf(body)}`.trim())
  return body
}

/** The provider's error code (S3 and Azure XML `<Code>`, Google JSON `error.message`/`error`), never the whole body. */
function errorCodeOf(body: string): string {
  const xml = /<Code>([^<]{1,100})<\/Code>/.exec(body)
  if (xml) return xml[1]!
  try {
    const json = JSON.parse(body) as { error?: string | { message?: string }; error_description?: string }
    const message = typeof json.error === 'string' ? json.error : json.error?.message
    return (message ?? json.error_description ?? '').slice(0, 200)
  } catch {
    return ''
  }
}

const xml = new XMLParser({ ignoreAttributes: true, parseTagValue: false, processEntities: true })

/** Parses a provider's XML answer; `listAt` names elements that are lists even when single. */
export function parseXml(provider: string, body: string): Record<string, unknown> {
  try {
    return xml.parse(body) as Record<string, unknown>
  } catch {
    throw new AppError('upstream', `${provider} answered with unreadable XML`)
  }
}

/** `value` as an array: XML turns a single child into an object and none into undefined. */
export const asList = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])
