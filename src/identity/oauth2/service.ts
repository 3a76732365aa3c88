import { rfc3339 } from '../../clock'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { sha256Hex } from '../tokens/secrets'
import * as store from './store'

export const Messages = {
  applicationNotFound: 'OAuth2 application not found',
  redirectUriInvalid: 'redirect URIs must be absolute URLs without a fragment',
  redirectUrisEmpty: 'at least one redirect URI is required',
  redirectUriScheme: 'redirect URIs must use http, https or a private-use scheme such as com.example.app',
  redirectUriNotExact: 'redirect URIs are matched exactly: they may not hold spaces or control characters',
} as const

/** Prefix of client secrets, so a leaked one is recognisable in logs and scanners. */
const CLIENT_SECRET_PREFIX = 'pos_'

export const randomSecret = (prefix: string) => `${prefix}${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`

export interface ApplicationParams {
  name: string
  redirectUris: string[]
  confidentialClient: boolean | undefined
}

/** The wire shape; `client_secret` only on creation. */
function presentApplication(row: store.ApplicationRow, clientSecret?: string) {
  return {
    id: row.id,
    name: row.name,
    client_id: row.clientId,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
    redirect_uris: redirectUrisOf(row),
    confidential_client: row.confidentialClient,
    created: rfc3339(row.createdAt),
  }
}

export const redirectUrisOf = (row: store.ApplicationRow): string[] => JSON.parse(row.redirectUris) as string[]

/**
 * Web schemes, or a native app's private-use scheme, which RFC 8252 §7.1 wants in reverse-domain
 * form (it has a dot). That shuts out javascript:, data:, file: and the like, which would run in or
 * read from whatever page follows the redirect.
 */
const isRedirectScheme = (protocol: string) =>
  protocol === 'https:' || protocol === 'http:' || /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(protocol)

/**
 * Drops empty entries (a form's trailing newline) and duplicates; every URI is kept exactly as
 * given, since the authorization request must name it byte for byte (RFC 6749 §3.1.2.3): one with
 * a space or control character anywhere, leading and trailing ones included, is refused rather than
 * trimmed into another URI. Each must parse as absolute, carry no fragment and use a redirect
 * scheme (above). Throws invalid.
 */
function checkRedirectUris(uris: string[]): string[] {
  const clean = [...new Set(uris.filter((u) => u !== ''))]
  if (clean.length === 0) throw new AppError('invalid', Messages.redirectUrisEmpty, [{ field: 'redirect_uris', message: 'is empty' }])
  for (const uri of clean) {
    if (/[\s\u0000-\u001f\u007f]/.test(uri))
      throw new AppError('invalid', Messages.redirectUriNotExact, [
        { field: 'redirect_uris', message: `${JSON.stringify(uri)} holds a space or control character` },
      ])
    let url: URL
    try {
      url = new URL(uri)
    } catch {
      throw new AppError('invalid', Messages.redirectUriInvalid, [{ field: 'redirect_uris', message: `"${uri}" is not an absolute URL` }])
    }
    if (url.hash !== '' || uri.includes('#'))
      throw new AppError('invalid', Messages.redirectUriInvalid, [{ field: 'redirect_uris', message: `"${uri}" has a fragment` }])
    if (!isRedirectScheme(url.protocol))
      throw new AppError('invalid', Messages.redirectUriScheme, [
        { field: 'redirect_uris', message: `"${url.protocol}" is not a redirect scheme` },
      ])
  }
  return clean
}

export async function listApplications(deps: Deps, uid: number) {
  return (await store.listApplicationsOfUser(deps.db.read, uid)).map((row) => presentApplication(row))
}

export async function getApplication(deps: Deps, uid: number, id: number) {
  const row = await store.findApplicationOfUser(deps.db.read, uid, id)
  if (!row) throw new AppError('notFound', Messages.applicationNotFound)
  return presentApplication(row)
}

/** Registers an application; the client secret is returned here only and stored hashed. Throws invalid. */
export async function createApplication(deps: Deps, uid: number, params: ApplicationParams) {
  const redirectUris = checkRedirectUris(params.redirectUris)
  const secret = randomSecret(CLIENT_SECRET_PREFIX)
  const row = await deps.db.write((tx) =>
    store.insertApplication(tx, {
      uid,
      name: params.name.trim(),
      clientId: crypto.randomUUID(),
      clientSecretHash: sha256Hex(secret),
      redirectUris: JSON.stringify(redirectUris),
      confidentialClient: params.confidentialClient ?? true,
    }),
  )
  return presentApplication(row, secret)
}

/** Changes name, redirect URIs and client type; the secret stays. Throws notFound or invalid. */
export async function updateApplication(deps: Deps, uid: number, id: number, params: ApplicationParams) {
  const redirectUris = checkRedirectUris(params.redirectUris)
  const row = await deps.db.write(async (tx) => {
    const current = await store.findApplicationOfUser(tx, uid, id)
    if (!current) throw new AppError('notFound', Messages.applicationNotFound)
    return store.updateApplication(tx, uid, id, {
      name: params.name.trim(),
      redirectUris: JSON.stringify(redirectUris),
      confidentialClient: params.confidentialClient ?? current.confidentialClient,
    })
  })
  if (!row) throw new AppError('notFound', Messages.applicationNotFound)
  return presentApplication(row)
}

/**
 * Deletes one of the caller's applications: its authorization codes and grants (access and refresh tokens) end
 * with it, so nothing it was given works afterwards. Throws notFound.
 */
export async function deleteApplication(deps: Deps, uid: number, id: number): Promise<void> {
  const deleted = await deps.db.write((tx) => store.deleteApplicationOfUser(tx, uid, id))
  if (!deleted) throw new AppError('notFound', Messages.applicationNotFound)
}

/**
 * A new client secret for one of the caller's applications, returned here only and stored hashed; the previous
 * secret stops working at once (a leaked one is revoked this way without re-registering). Throws notFound.
 */
export async function regenerateClientSecret(deps: Deps, uid: number, id: number) {
  const secret = randomSecret(CLIENT_SECRET_PREFIX)
  const row = await deps.db.write((tx) => store.updateApplicationSecret(tx, uid, id, sha256Hex(secret)))
  if (!row) throw new AppError('notFound', Messages.applicationNotFound)
  return presentApplication(row, secret)
}
