import type { Actor } from '../authz/actor'
import { AppError } from '../errors'

export const UpgradeMessages = {
  crossOrigin: 'a cookie-authenticated WebSocket must come from this site (Origin check)',
  noUpgrade:
    'expected a WebSocket upgrade: GET with Upgrade: websocket, Connection: Upgrade, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key',
  spdy: "kubectl's SPDY upgrade is not relayed: exec, attach and cp need kubectl 1.30 or newer and port-forward kubectl 1.31 or newer, which speak WebSocket (a newer kubectl falls back to SPDY only when its WebSocket attempt was refused)",
} as const

/** True when the request asks to switch protocols (any Upgrade header, WebSocket or not). */
export const asksUpgrade = (request: Request): boolean => request.headers.has('upgrade')

/** A Sec-WebSocket-Key: 16 bytes in base64 (RFC 6455 §4.1). */
const WEBSOCKET_KEY = /^[A-Za-z0-9+/]{22}==$/
/** kubectl's SPDY upgrade (`SPDY/3.1`), which the platform cannot relay: Bun.serve hands over WebSocket connections only. */
const SPDY_UPGRADE = /^\s*spdy\//i
const CONNECTION_UPGRADE = /(?:^|,)\s*upgrade\s*(?:,|$)/i

/**
 * Throws badRequest unless `request` is a valid WebSocket opening handshake (RFC 6455 §4.1):
 * refused here, before anything reaches a member, since a cross-site navigation to a session
 * URL carries the cookie but is no upgrade, and kubectl's SPDY fallback is not relayed. Throws
 * forbidden for a cookie-authenticated upgrade from another origin than `publicOrigin`
 * (cross-site WebSocket hijacking; browsers always send Origin on a WebSocket, kubectl never).
 */
export function assertWebSocketUpgrade(request: Request, actor: Actor, publicOrigin: string): void {
  assertWebSocketHandshake(request)
  const origin = request.headers.get('origin')
  if (actor.credential === 'session' && origin !== null && origin !== publicOrigin)
    throw new AppError('forbidden', UpgradeMessages.crossOrigin)
}

/** Throws badRequest unless `request` is a valid WebSocket opening handshake (RFC 6455 §4.1). */
export function assertWebSocketHandshake(request: Request): void {
  const headers = request.headers
  const valid =
    request.method === 'GET' &&
    headers.get('upgrade')?.toLowerCase() === 'websocket' &&
    CONNECTION_UPGRADE.test(headers.get('connection') ?? '') &&
    headers.get('sec-websocket-version') === '13' &&
    WEBSOCKET_KEY.test(headers.get('sec-websocket-key') ?? '')
  if (!valid)
    throw new AppError('badRequest', SPDY_UPGRADE.test(headers.get('upgrade') ?? '') ? UpgradeMessages.spdy : UpgradeMessages.noUpgrade)
}
