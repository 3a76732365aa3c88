import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/**
 * The egress guard for every URL a user gives us (cloud endpoints, cluster servers, discovery
 * URLs, avatar links): the host is resolved once, every address is checked, and the request goes
 * to the checked address with the original Host and TLS name, so a DNS answer cannot change
 * between the check and the connection (rebinding), and no redirect is followed.
 */
export interface EgressPolicy {
  /** Loopback, private, link-local, CGNAT and ULA targets are allowed (tests, a LAN MinIO). Metadata never is. */
  allowPrivate: boolean
  /** The setting that allows private targets for this caller, named in refusals; PLATFORM_ALLOW_PRIVATE_ENDPOINTS when unset. */
  setting?: string
}

export type AddressClass = 'public' | 'private' | 'metadata'

/** Raised when a URL may not be reached; the message names the host, never anything secret. */
export class EgressRefused extends Error {
  constructor(
    readonly host: string,
    reason: string,
  ) {
    super(`${host}: ${reason}`)
    this.name = 'EgressRefused'
  }
}

// Cloud instance-metadata services: refused whatever the policy (they hand out credentials).
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16'])
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
])

/** The IPv4 address carried inside an IPv6 one (mapped, compatible, 6to4, NAT64, Teredo), if any. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const parts = address.parts
  const v4 = (hi: number, lo: number) => ipaddr.IPv4.parse(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`)
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return v4(parts[6]!, parts[7]!)
    case '6to4':
      return v4(parts[1]!, parts[2]!)
    case 'teredo':
      // Teredo stores the client's address inverted in the last 32 bits.
      return v4(~parts[6]! & 0xffff, ~parts[7]! & 0xffff)
    default:
      // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks).
      return parts.slice(0, 6).every((p) => p === 0) && (parts[6] !== 0 || parts[7]! > 1) ? v4(parts[6]!, parts[7]!) : undefined
  }
}

/** Public, private (loopback, link-local, RFC 1918, CGNAT, ULA, multicast, reserved…) or metadata. */
export function classifyAddress(text: string): AddressClass {
  const address = ipaddr.parse(text.replace(/^\[|\]$/g, ''))
  if (METADATA_ADDRESSES.has(address.toNormalizedString()) || METADATA_ADDRESSES.has(address.toString())) return 'metadata'
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6)
    if (inner) return classifyAddress(inner.toString()) === 'metadata' ? 'metadata' : 'private'
  }
  return address.range() === 'unicast' ? 'public' : 'private'
}

function refusalOf(host: string, address: string, policy: EgressPolicy): EgressRefused | undefined {
  const kind = classifyAddress(address)
  if (kind === 'metadata') return new EgressRefused(host, 'is a cloud metadata address')
  if (kind === 'private' && !policy.allowPrivate) {
    return new EgressRefused(
      host,
      `resolves to the private or local address ${address} (set ${policy.setting ?? 'PLATFORM_ALLOW_PRIVATE_ENDPOINTS'}=true to allow)`,
    )
  }
  return undefined
}

/**
 * Resolves the URL's host and returns the address to connect to. Throws EgressRefused for a
 * scheme other than http(s), a name that does not resolve, or any refused address among the answers.
 */
export async function resolveChecked(url: URL, policy: EgressPolicy): Promise<string> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new EgressRefused(url.host, 'only http and https URLs are allowed')
  if (url.username || url.password) throw new EgressRefused(url.host, 'URLs with embedded credentials are not allowed')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (METADATA_NAMES.has(host.toLowerCase().replace(/\.$/, ''))) throw new EgressRefused(url.hostname, 'is a cloud metadata address')
  const answers = ipaddr.isValid(host) ? [host] : await resolveAll(url.hostname, host)
  for (const address of answers) {
    const refusal = refusalOf(url.hostname, address, policy)
    if (refusal) throw refusal
  }
  return answers[0]!
}

async function resolveAll(shown: string, host: string): Promise<string[]> {
  try {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
  } catch (error) {
    const code = (error as { code?: string }).code
    throw new EgressRefused(
      shown,
      code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'the name does not resolve (DNS)' : `cannot be resolved (${code ?? 'DNS error'})`,
    )
  }
}

/** TLS options Bun's fetch accepts beside the standard RequestInit. */
export interface TlsOptions {
  ca?: string
  cert?: string
  key?: string
  rejectUnauthorized?: boolean
  serverName?: string
}

export type EgressInit = Omit<RequestInit, 'redirect'> & { tls?: TlsOptions; decompress?: boolean }

/**
 * fetch for a user-given URL: checked by resolveChecked, then sent to the checked address with the
 * URL's Host header and TLS server name; a redirect is returned as it is, never followed.
 */
export async function egressFetch(target: string | URL, init: EgressInit, policy: EgressPolicy): Promise<Response> {
  const url = new URL(target)
  const address = await resolveChecked(url, policy)
  const pinned = new URL(url)
  pinned.hostname = address.includes(':') ? `[${address}]` : address
  const headers = new Headers(init.headers)
  headers.set('host', url.host)
  const literalHost = ipaddr.isValid(url.hostname.replace(/^\[|\]$/g, ''))
  const tls = url.protocol === 'https:' && !literalHost ? { serverName: url.hostname, ...init.tls } : init.tls
  return fetch(pinned, { ...init, headers, tls, redirect: 'manual' } as RequestInit)
}
