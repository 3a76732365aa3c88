import { Elysia } from 'elysia'

/**
 * Headers every answer carries: `X-Content-Type-Options: nosniff`, so a browser never reads a
 * JSON error or a relayed body as HTML or script, whatever it contains.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff' }

export const securityHeaders = new Elysia({ name: 'security-headers' }).onRequest(({ set }) => {
  Object.assign(set.headers, SECURITY_HEADERS)
})
