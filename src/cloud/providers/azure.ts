import type { EgressPolicy } from '../../net/egress'
import { asList, parseXml, providerRequest } from './request'

export interface AzureStorageKeys {
  account: string
  /** The account key, base64. */
  key: string
  /** Blob service URL including the account; https://<account>.blob.core.windows.net when absent. */
  endpoint?: string
}

const API_VERSION = '2021-08-06'

interface EnumerationResults {
  Containers?: { Container?: { Name?: string } | { Name?: string }[] }
  NextMarker?: string
}

/** Every container of the account (List Containers with Shared Key), following NextMarker to the end. */
export async function listAzureContainers(keys: AzureStorageKeys, policy: EgressPolicy, pageSize: number): Promise<string[]> {
  const base = (keys.endpoint || `https://${keys.account}.blob.core.windows.net`).replace(/\/+$/, '')
  const names: string[] = []
  let marker: string | undefined
  do {
    const url = new URL(`${base}/`)
    url.searchParams.set('comp', 'list')
    url.searchParams.set('maxresults', String(pageSize))
    if (marker) url.searchParams.set('marker', marker)
    const headers: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': API_VERSION }
    headers.authorization = await sharedKeyAuthorization(keys, 'GET', url, headers)
    const body = await providerRequest('Azure Blob', url.toString(), { method: 'GET', headers }, policy)
    const result = (parseXml('Azure Blob', body).EnumerationResults ?? {}) as EnumerationResults
    for (const container of asList(result.Containers?.Container)) if (container.Name) names.push(container.Name)
    marker = result.NextMarker || undefined
  } while (marker)
  return names
}

/**
 * The Shared Key Authorization header of a request without a body: the standard headers are all
 * empty, then the x-ms-* headers and the canonical resource (`/<account><path>` and the sorted
 * query parameters), signed with HMAC-SHA256 under the account key.
 */
export async function sharedKeyAuthorization(
  keys: AzureStorageKeys,
  method: string,
  url: URL,
  headers: Record<string, string>,
): Promise<string> {
  const canonicalHeaders = Object.keys(headers)
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${headers[name]}\n`)
    .join('')
  const params = [...url.searchParams.entries()]
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const canonicalResource = `/${keys.account}${decodeURIComponent(url.pathname)}${params.map(([name, value]) => `\n${name}:${value}`).join('')}`
  const stringToSign = `${method}\n\n\n\n\n\n\n\n\n\n\n\n${canonicalHeaders}${canonicalResource}`
  const key = await crypto.subtle.importKey('raw', Buffer.from(keys.key, 'base64'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const signature = Buffer.from(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(stringToSign))).toString('base64')
  return `SharedKey ${keys.account}:${signature}`
}
