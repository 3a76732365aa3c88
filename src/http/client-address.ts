import ipaddr from 'ipaddr.js'
import type { Cidr } from '../config'

/** The address in its plain form (IPv4-mapped IPv6 as IPv4), or undefined when `text` is not an address. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  return ipaddr.isValid(text) ? ipaddr.process(text) : undefined
}

const within = (address: ipaddr.IPv4 | ipaddr.IPv6, trusted: readonly Cidr[]) =>
  trusted.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))

export type RequestIpSource = { requestIP(request: Request): { address: string } | null } | null

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy; then the nearest
 * `X-Forwarded-For` hop, read from the right, that is not itself a trusted proxy (entries further
 * left were written by the client and prove nothing). '' when the request came over no socket
 * (in-process tests).
 */
export function clientAddress(server: RequestIpSource, request: Request, trusted: readonly Cidr[]): string {
  const peerText = server?.requestIP(request)?.address ?? ''
  const peer = parseAddress(peerText)
  if (!peer) return peerText
  if (trusted.length === 0 || !within(peer, trusted)) return peer.toString()
  const hops = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  let nearest = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i])
    // A malformed hop came from beyond our proxies: the last address they vouched for stands.
    if (!hop) break
    if (!within(hop, trusted)) return hop.toString()
    nearest = hop
  }
  return nearest.toString()
}
