import { importPKCS8, SignJWT } from 'jose'
import { AppError } from '../../errors'
import type { EgressPolicy } from '../../net/egress'
import { providerRequest } from './request'

export interface GcsKeys {
  projectID: string
  /** The service-account key file, parsed. */
  serviceAccount: { client_email: string; private_key: string; private_key_id?: string; token_uri?: string }
}

const READ_ONLY_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_only'
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token'

/**
 * Every bucket of the project: a JWT signed with the service account's key is traded for an
 * OAuth token at the key file's token_uri, then the JSON API's bucket list is followed to the end.
 * `apiBase` is the JSON API origin (Google's, or an emulator's from configuration).
 */
export async function listGcsBuckets(keys: GcsKeys, apiBase: string, policy: EgressPolicy, pageSize: number): Promise<string[]> {
  const accessToken = await oauthToken(keys, policy)
  const names: string[] = []
  let pageToken: string | undefined
  do {
    const url = new URL(`${apiBase.replace(/\/+$/, '')}/storage/v1/b`)
    url.searchParams.set('project', keys.projectID)
    url.searchParams.set('maxResults', String(pageSize))
    url.searchParams.set('fields', 'items/name,nextPageToken')
    if (pageToken) url.searchParams.set('pageToken', pageToken)
    const page = parseJson(
      await providerRequest('Google Cloud Storage', url.toString(), { headers: { authorization: `Bearer ${accessToken}` } }, policy),
    ) as {
      items?: { name?: string }[]
      nextPageToken?: string
    }
    for (const item of page.items ?? []) if (item.name) names.push(item.name)
    pageToken = page.nextPageToken || undefined
  } while (pageToken)
  return names
}

async function oauthToken(keys: GcsKeys, policy: EgressPolicy): Promise<string> {
  const tokenUri = keys.serviceAccount.token_uri || DEFAULT_TOKEN_URI
  let privateKey: CryptoKey
  try {
    privateKey = await importPKCS8(keys.serviceAccount.private_key, 'RS256')
  } catch {
    throw new AppError('invalid', "the service account's private_key is not a PKCS#8 PEM key")
  }
  const assertion = await new SignJWT({ scope: READ_ONLY_SCOPE })
    .setProtectedHeader({
      alg: 'RS256',
      typ: 'JWT',
      ...(keys.serviceAccount.private_key_id ? { kid: keys.serviceAccount.private_key_id } : {}),
    })
    .setIssuer(keys.serviceAccount.client_email)
    .setAudience(tokenUri)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey)
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion })
  const answer = parseJson(
    await providerRequest(
      'Google OAuth',
      tokenUri,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      },
      policy,
    ),
  ) as { access_token?: string }
  if (!answer.access_token) throw new AppError('upstream', 'Google OAuth answered without an access token')
  return answer.access_token
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    throw new AppError('upstream', 'Google Cloud Storage answered with unreadable JSON')
  }
}
