import ipaddr from 'ipaddr.js'

/**
 * The egress guard for every URL a user gives us (cloud endpoints, cluster servers, discovery
 * URLs, avatar links): the host is resolved once, every address is checked, and the request goes
 * to the checked address with the original Host and TLS name, so a DNS answer cannot change
 * between the check and the connection (rebinding), and no redirect is followed.
 */
export interface EgressPolicy extends Partial<Network> {
  /** Loopback, private, link-local, CGNAT and ULA targets are allowed (tests, a LAN MinIO). Metadata never is. */
  allowPrivate: boolean
  /** The setting that allows private targets for this caller, named in refusals; PLATFORM_ALLOW_PRIVATE_ENDPOINTS when unset. */
  setting?: string
}

/** Every address a host name resolves to (IPv4 and IPv6). Throws with the resolver's `code` when it does not resolve. */
type Resolver = (host: string) => Promise<string[]>

/**
 * How an app sees the network when it dials a user-given host: what a name resolves to, and which
 * addresses count as public beside those classifyAddress calls public. Production uses the
 * system's DNS and no exception; a test answers for its own names and may let a loopback address
 * stand in for the internet (a metadata address is refused whatever this says).
 */
export interface Network {
  resolve: Resolver
  publicAddresses: ReadonlySet<string>
}

export const systemNetwork: Network = {
  resolve: async (host) => (await Bun.dns.lookup(host)).map((answer) => answer.address),
  publicAddresses: new Set(),
}

export type AddressClass = 'public' | 'private' | 'metadata'

/** Why a URL may not be reached: its address is metadata or private, its name does not resolve, or the URL itself is refused. */
export type RefusalKind = 'metadata' | 'private' | 'unresolved' | 'url'

/** Raised when a URL may not be reached; the message names the host, never anything secret. */
export class EgressRefused extends Error {
  constructor(
    readonly host: string,
    /** Why, without the host: for a message that names the host its own way. */
    readonly reason: string,
    readonly kind: RefusalKind,
  ) {
    super(`${host}: ${reason}`)
    this.name = 'EgressRefused'
  }
}

// Cloud instance-metadata and credential services: refused whatever the policy (they hand out
// credentials): EC2 (IPv4 and IPv6), ECS task credentials, EKS Pod Identity (IPv4 and IPv6),
// Alibaba, Azure.
const METADATA_ADDRESSES = new Set([
  '169.254.169.254',
  'fd00:ec2::254',
  '169.254.170.2',
  '169.254.170.23',
  'fd00:ec2::23',
  '100.100.100.200',
  '168.63.129.16',
])
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
  if (kind === 'metadata') return new EgressRefused(host, 'is a cloud metadata address', 'metadata')
  if (kind === 'private' && !policy.allowPrivate && !policy.publicAddresses?.has(address)) {
    return new EgressRefused(
      host,
      `resolves to the private or local address ${address} (set ${policy.setting ?? 'PLATFORM_ALLOW_PRIVATE_ENDPOINTS'}=true to allow)`,
      'private',
    )
  }
  return undefined
}

/**
 * Resolves the URL's host and returns the address to connect to. Throws EgressRefused for a
 * scheme other than http(s), a name that does not resolve, or any refused address among the answers.
 */
export async function resolveChecked(url: URL, policy: EgressPolicy): Promise<string> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new EgressRefused(url.host, 'only http and https URLs are allowed', 'url')
  if (url.username || url.password) throw new EgressRefused(url.host, 'URLs with embedded credentials are not allowed', 'url')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (METADATA_NAMES.has(host.toLowerCase().replace(/\.$/, '')))
    throw new EgressRefused(url.hostname, 'is a cloud metadata address', 'metadata')
  const answers = ipaddr.isValid(host) ? [host] : await resolveAll(url.hostname, host, policy.resolve ?? systemNetwork.resolve)
  for (const address of answers) {
    const refusal = refusalOf(url.hostname, address, policy)
    if (refusal) throw refusal
  }
  return answers[0]!
}

const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'DNS_ENOTFOUND', 'DNS_ENODATA', 'DNS_ESERVFAIL', 'DNS_ETIMEOUT'])

async function resolveAll(shown: string, host: string, resolve: Resolver): Promise<string[]> {
  let answers: string[]
  try {
    answers = await resolve(host)
  } catch (error) {
    const code = (error as { code?: string }).code
    throw new EgressRefused(
      shown,
      code && NOT_FOUND_CODES.has(code) ? 'the name does not resolve (DNS)' : `cannot be resolved (${code ?? 'DNS error'})`,
      'unresolved',
    )
  }
  if (answers.length === 0) throw new EgressRefused(shown, 'the name does not resolve (DNS)', 'unresolved')
  return answers
}

/** Where to connect for a checked URL: the address, and the name kept for Host and for TLS. */
export interface Pinned {
  /** The URL with its host replaced by the checked address. */
  url: URL
  address: string
  /** The URL's host name for TLS (SNI and the certificate check); undefined when the URL names an address. */
  tlsName: string | undefined
}

/** Resolves and checks the URL's host (resolveChecked) and says where to connect. Throws EgressRefused. */
export async function pin(url: URL, policy: EgressPolicy): Promise<Pinned> {
  const address = await resolveChecked(url, policy)
  const pinned = new URL(url)
  pinned.hostname = address.includes(':') ? `[${address}]` : address
  return { url: pinned, address, tlsName: tlsNameOf(url) }
}

/** The name TLS checks for `url` (SNI and the certificate): its host name; undefined when it names an address. */
export const tlsNameOf = (url: URL): string | undefined => (ipaddr.isValid(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname)

/** TLS options Bun's fetch accepts beside the standard RequestInit. */
interface TlsOptions {
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
  const pinned = await pin(url, policy)
  const headers = new Headers(init.headers)
  headers.set('host', url.host)
  const tls = url.protocol === 'https:' && pinned.tlsName ? { serverName: pinned.tlsName, ...init.tls } : init.tls
  return fetch(pinned.url, { ...init, headers, tls, redirect: 'manual' } as RequestInit)
}
