import type { Clock } from '../../clock'
import { AppError } from '../../errors'
import { expectOk, type RegistryAccess, readCapped, registryFailure, registryFetch } from './transport'
import { isExactVersion, pickVersion } from './versions'

/**
 * An OCI registry holding Helm charts (reference §4.2): a tag is a chart version (`+` written as
 * `_`), its manifest names one chart layer, fetched as a blob by digest. Registries that want a
 * token answer 401 with a Bearer challenge; the token is fetched from the realm (anonymously or
 * with the source's credentials) and kept until it expires. The credentials go only to a realm on
 * the registry's own host and port; a realm elsewhere is asked anonymously (docs/api/orders.md).
 */

const CHART_LAYER_TYPES = ['application/vnd.cncf.helm.chart.content.v1.tar+gzip', 'application/tar+gzip']
const MANIFEST_TYPE = 'application/vnd.oci.image.manifest.v1+json'
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024
const MAX_TAG_PAGES = 20

export interface OciRepository {
  /** `http://host:port` for loopback registries (tests, labs), `https://host[:port]` otherwise. */
  origin: string
  /** The repository path of the chart, e.g. `charts/demo`. */
  path: string
}

export interface OciChart {
  version: string
  /** `sha256:<hex>` of the chart layer. */
  layerDigest: string
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/** The repository of chart `name` under `oci://host/path` (or the chart's own `oci://` URL when `name` is omitted). */
export function ociRepositoryOf(url: URL, name?: string): OciRepository {
  const base = url.pathname.replace(/^\/+|\/+$/g, '')
  const path = name === undefined ? base : base ? `${base}/${name}` : name
  return { origin: `${LOOPBACK.test(url.hostname) ? 'http' : 'https'}://${url.host}`, path }
}

interface Challenge {
  scheme: string
  params: Record<string, string>
}

function parseChallenge(header: string): Challenge | undefined {
  const match = /^(\w+)\s+(.*)$/.exec(header.trim())
  if (!match) return undefined
  const params: Record<string, string> = {}
  for (const [, key, quoted, bare] of match[2]!.matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g))
    params[key!.toLowerCase()] = quoted ?? bare ?? ''
  return { scheme: match[1]!.toLowerCase(), params }
}

interface Token {
  value: string
  expiresAt: number
  /** The realm's host when the source has credentials that were not sent to it (another host than the registry's). */
  withheldFrom?: string
}

export class OciClient {
  private readonly tokens = new Map<string, Token>()

  /** `clock` decides when a token has expired. */
  constructor(private readonly clock: Clock) {}

  /** Resolves `wanted` to a version and its chart layer; throws invalid for an unknown chart or version, upstream for registry failures. */
  async locate(access: RegistryAccess, repo: OciRepository, wanted: string | undefined): Promise<OciChart> {
    const asked = (wanted ?? '').trim()
    const version = asked !== '' && isExactVersion(asked) ? asked : await this.pickTag(access, repo, asked)
    const response = await this.get(access, repo, `/manifests/${encodeURIComponent(version.replace(/\+/g, '_'))}`, MANIFEST_TYPE)
    if (response.status === 404) {
      await response.body?.cancel()
      throw new AppError('invalid', `chart ${repo.path} has no version "${version}" in the registry ${access.label}`)
    }
    await expectOk(access, response, `manifest of ${repo.path}:${version}`)
    const manifest = parseJson(access, await readCapped(access, response, MAX_MANIFEST_BYTES, 'manifest'), 'manifest') as {
      layers?: { mediaType?: string; digest?: string }[]
    }
    const layer = (manifest.layers ?? []).find((l) => CHART_LAYER_TYPES.includes(l.mediaType ?? ''))
    if (!layer || typeof layer.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(layer.digest))
      throw new AppError('invalid', `${repo.path}:${version} in the registry ${access.label} is not a Helm chart (no chart layer)`)
    return { version, layerDigest: layer.digest }
  }

  /** The chart layer's bytes, at most `maxBytes`. */
  async fetchLayer(access: RegistryAccess, repo: OciRepository, digest: string, maxBytes: number): Promise<Uint8Array> {
    const response = await this.get(access, repo, `/blobs/${digest}`, CHART_LAYER_TYPES[0]!)
    await expectOk(access, response, `chart layer ${digest}`)
    return readCapped(access, response, maxBytes, 'chart archive')
  }

  private async pickTag(access: RegistryAccess, repo: OciRepository, asked: string): Promise<string> {
    const tags: string[] = []
    let next: string | undefined = `/tags/list`
    for (let page = 0; next && page < MAX_TAG_PAGES; page++) {
      const response = await this.get(access, repo, next, 'application/json')
      if (response.status === 404) {
        await response.body?.cancel()
        throw new AppError('invalid', `chart ${repo.path} is not in the registry ${access.label}`)
      }
      await expectOk(access, response, `tag list of ${repo.path}`)
      const body = parseJson(access, await readCapped(access, response, MAX_MANIFEST_BYTES, 'tag list'), 'tag list') as { tags?: unknown }
      if (Array.isArray(body.tags)) for (const tag of body.tags) if (typeof tag === 'string') tags.push(tag.replace(/_/g, '+'))
      next = nextPage(response.headers.get('link'), repo)
    }
    const version = pickVersion(tags, asked)
    if (version === undefined)
      throw new AppError('invalid', `chart ${repo.path} has no version matching "${asked}" in the registry ${access.label}`)
    return version
  }

  /** GET `/v2/<repo><suffix>`, answering a Bearer or Basic challenge once. */
  private async get(access: RegistryAccess, repo: OciRepository, suffix: string, accept: string): Promise<Response> {
    const url = new URL(suffix.startsWith('/v2/') ? suffix : `/v2/${repo.path}${suffix}`, repo.origin)
    const scopeKey = `${repo.origin}/${repo.path}\u0000${access.username ?? ''}`
    const cached = this.tokens.get(scopeKey)
    const headers: Record<string, string> = { accept }
    if (cached && cached.expiresAt > this.clock.now()) headers.authorization = `Bearer ${cached.value}`
    const first = await registryFetch(access, url, { headers })
    if (first.status !== 401) return first
    const challenge = parseChallenge(first.headers.get('www-authenticate') ?? '')
    await first.body?.cancel()
    if (challenge?.scheme === 'basic' && access.username !== undefined) {
      return this.refusedAgain(access, await registryFetch(access, url, { headers: { accept }, basicAuth: true }), 'request')
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) throw registryFailure(access, 'asked for credentials (401)')
    const token = await this.fetchToken(access, challenge.params, repo)
    this.tokens.set(scopeKey, token)
    const response = await registryFetch(access, url, { headers: { accept, authorization: `Bearer ${token.value}` } })
    return this.refusedAgain(access, response, 'request', token.withheldFrom)
  }

  /** `response`, unless it is 401 or 403: then upstream, saying whose request was refused. */
  private async refusedAgain(access: RegistryAccess, response: Response, what: string, withheldFrom?: string): Promise<Response> {
    if (response.status !== 401 && response.status !== 403) return response
    await response.body?.cancel()
    throw registryFailure(access, refusal(access, response.status, what, withheldFrom))
  }

  private async fetchToken(access: RegistryAccess, params: Record<string, string>, repo: OciRepository): Promise<Token> {
    let realm: URL
    try {
      realm = new URL(params.realm!)
    } catch {
      throw registryFailure(access, 'sent a malformed token realm')
    }
    if (params.service) realm.searchParams.set('service', params.service)
    realm.searchParams.set('scope', params.scope ?? `repository:${repo.path}:pull`)
    // A registry may name any realm; sending it the source's password would hand it to another host.
    const registryHost = new URL(repo.origin).host
    const withheldFrom = access.username !== undefined && realm.host !== registryHost ? realm.host : undefined
    const response = await this.refusedAgain(
      access,
      await registryFetch(access, realm, {
        headers: { accept: 'application/json' },
        basicAuth: access.username !== undefined && !withheldFrom,
        credentialHost: registryHost,
      }),
      'token request',
      withheldFrom,
    )
    await expectOk(access, response, 'token')
    const body = parseJson(access, await readCapped(access, response, 1024 * 1024, 'token'), 'token answer') as {
      token?: unknown
      access_token?: unknown
      expires_in?: unknown
    }
    const value = typeof body.token === 'string' ? body.token : typeof body.access_token === 'string' ? body.access_token : undefined
    if (!value) throw registryFailure(access, 'answered the token request without a token')
    const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60
    // Renewed a little early so a token never expires between the check and the request.
    return { value, expiresAt: this.clock.now() + Math.max(0, seconds - 10) * 1000, withheldFrom }
  }
}

/** Why a registry or its realm refused: the credentials, or an anonymous request (and why it was anonymous). */
function refusal(access: RegistryAccess, status: number, what: string, withheldFrom: string | undefined): string {
  if (withheldFrom)
    return `refused the anonymous ${what} (${status}); the source's credentials go only to the registry's own host, and its token service is on ${withheldFrom}`
  return `refused the ${access.username === undefined ? `anonymous ${what}` : 'credentials'} (${status})`
}

function nextPage(link: string | null, repo: OciRepository): string | undefined {
  const match = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null
  if (!match) return undefined
  const url = new URL(match[1]!, repo.origin)
  // Only pages of the same repository's tag list, never an arbitrary URL the registry names.
  return url.pathname === `/v2/${repo.path}/tags/list` ? `${url.pathname}${url.search}` : undefined
}

function parseJson(access: RegistryAccess, bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(bytes).toString('utf8'))
    if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>
  } catch {
    /* answered below */
  }
  throw registryFailure(access, `sent a ${what} that is not JSON`)
}
