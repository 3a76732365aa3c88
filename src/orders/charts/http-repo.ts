import { parse as parseYaml } from 'yaml'
import { AppError } from '../../errors'
import { expectOk, type RegistryAccess, readCapped, registryFailure, registryFetch } from './transport'
import { pickVersion } from './versions'

/**
 * A Helm HTTP repository (reference §4.1): `index.yaml` lists each chart's versions with their
 * archive URLs and sha256 digests. The parsed index is kept per repository and revalidated with
 * its ETag, so an unchanged index costs one 304.
 */

export interface IndexEntry {
  version: string
  urls: string[]
  digest: string | undefined
  deprecated: boolean
}

interface CachedIndex {
  etag: string
  entries: Map<string, IndexEntry[]>
}

export interface ChartLocation {
  version: string
  archiveUrl: URL
  /** sha256 hex from the index (ignored unless 64 hex digits), checked against the download when present. */
  digest: string | undefined
}

const MAX_INDEX_BYTES = 50 * 1024 * 1024

/** The repository's index URL: `index.yaml` beside the repository URL, its query kept. */
function indexUrlOf(repoUrl: URL): URL {
  const base = new URL(repoUrl)
  if (!base.pathname.endsWith('/')) base.pathname += '/'
  const url = new URL('index.yaml', base)
  url.search = repoUrl.search
  return url
}

function entriesOf(index: unknown): Map<string, IndexEntry[]> {
  const raw = (index as { entries?: unknown } | null)?.entries
  const entries = new Map<string, IndexEntry[]>()
  if (!raw || typeof raw !== 'object') return entries
  for (const [name, versions] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(versions)) continue
    entries.set(
      name,
      versions.flatMap((v: Record<string, unknown> | null) => {
        if (!v || typeof v !== 'object' || v.version === undefined) return []
        const urls = Array.isArray(v.urls) ? v.urls.filter((u): u is string => typeof u === 'string') : []
        return [
          {
            version: String(v.version),
            urls,
            digest: typeof v.digest === 'string' && /^[0-9a-fA-F]{64}$/.test(v.digest) ? v.digest.toLowerCase() : undefined,
            deprecated: v.deprecated === true,
          },
        ]
      }),
    )
  }
  return entries
}

export class HttpRepoClient {
  private readonly indexes = new Map<string, CachedIndex>()

  /** The parsed index of `repoUrl`; throws upstream when the repository fails, invalid when the index is not YAML. */
  async index(access: RegistryAccess, repoUrl: URL): Promise<Map<string, IndexEntry[]>> {
    const url = indexUrlOf(repoUrl)
    const key = `${url.href}\u0000${access.username ?? ''}`
    const cached = this.indexes.get(key)
    const headers: Record<string, string> = { accept: 'application/x-yaml, text/yaml, */*' }
    if (cached) headers['if-none-match'] = cached.etag
    const response = await registryFetch(access, url, { headers, basicAuth: true })
    if (response.status === 304 && cached) return cached.entries
    await expectOk(access, response, 'index.yaml')
    const text = Buffer.from(await readCapped(access, response, MAX_INDEX_BYTES, 'index.yaml')).toString('utf8')
    let parsed: unknown
    try {
      parsed = parseYaml(text, { version: '1.1', maxAliasCount: 1000 })
    } catch {
      throw registryFailure(access, 'index.yaml is not valid YAML')
    }
    const entries = entriesOf(parsed)
    const etag = response.headers.get('etag')
    if (etag) this.indexes.set(key, { etag, entries })
    else this.indexes.delete(key)
    return entries
  }

  /** Where chart `name` at `wanted` lives; throws invalid (422) for an unknown chart or version. */
  async locate(access: RegistryAccess, repoUrl: URL, name: string, wanted: string | undefined): Promise<ChartLocation> {
    const versions = (await this.index(access, repoUrl)).get(name)
    if (!versions || versions.length === 0) throw new AppError('invalid', `chart "${name}" is not in the repository ${access.label}`)
    const version = pickVersion(
      versions.map((v) => v.version),
      wanted,
    )
    const entry = version === undefined ? undefined : versions.find((v) => v.version === version)
    if (!entry) throw new AppError('invalid', `chart "${name}" has no version matching "${wanted ?? ''}" in the repository ${access.label}`)
    const first = entry.urls[0]
    if (!first) throw registryFailure(access, `the index lists no URL for ${name}@${entry.version}`)
    let archiveUrl: URL
    try {
      archiveUrl = new URL(first, indexUrlOf(repoUrl))
    } catch {
      throw registryFailure(access, `the index lists a malformed URL for ${name}@${entry.version}`)
    }
    return { version: entry.version, archiveUrl, digest: entry.digest }
  }
}
