import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BoundedCache } from '../../bounded-cache'
import type { Clock } from '../../clock'
import { AppError } from '../../errors'
import { type ArchiveLimits, type ChartArchive, chartMetadataOf, readChartArchive, UnsafeArchive } from './archive'
import { HttpRepoClient } from './http-repo'
import { OciClient, ociRepositoryOf } from './oci'
import { packChartArchive } from './pack'
import { checkSchemaReferences } from './schema-refs'
import { expectOk, type RegistryAccess, readCapped, registryFetch } from './transport'

/**
 * The chart client: finds a chart in an HTTP repository, an OCI registry or at a plain archive
 * URL, downloads it once, checks its digest, proves it harmless (archive.ts, schema-refs.ts) and
 * keeps on disk, by the original's digest, a re-packing of exactly what was checked (pack.ts):
 * the archive Helm is handed. What it resolved is pinned into the order, so later renders need
 * no registry. Parsed charts stay in memory up to a bound in bytes, not in number.
 */

/** Where a package's chart comes from, as the order names it. */
export interface ChartRef {
  /** A repository (`http(s)://`), a registry path (`oci://host/path`) or an archive (`…/x-1.0.0.tgz`). */
  url: URL
  /** The chart name; for an archive URL or an `oci://` URL ending in the chart, may be empty. */
  name: string
  /** Exact version, range, or empty for the latest stable one. */
  version: string | undefined
}

/** A chart resolved to one archive; stored with the order. */
export interface PinnedChart {
  /** The repository, registry or archive URL the chart was found at (never with credentials). */
  url: string
  name: string
  version: string
  /** `sha256:<hex>` of the archive. */
  digest: string
  /** Where the archive is downloaded from again should the cache lose it. */
  archiveUrl: string
  deprecated: boolean
}

export interface LoadedChart {
  pin: PinnedChart
  /** The checked archive on disk (our re-packing of `archive`), handed to Helm. */
  path: string
  archive: ChartArchive
}

export interface ChartClientSettings {
  cacheDir: string
  limits: ArchiveLimits
  /** Bound of the parsed charts kept in memory, counted as the bytes their readings hold. */
  memoryBytes: number
  clock: Clock
}

export const isArchiveUrl = (url: URL) => /\.(tgz|tar\.gz)$/.test(url.pathname)

export class ChartClient {
  private readonly http = new HttpRepoClient()
  private readonly oci: OciClient
  private readonly limits: ArchiveLimits
  /** Parsed charts by digest; what a render or a values file needs without reading the archive again. */
  readonly parsed: BoundedCache<ChartArchive>

  constructor(private readonly settings: ChartClientSettings) {
    mkdirSync(settings.cacheDir, { recursive: true, mode: 0o700 })
    this.limits = settings.limits
    this.parsed = new BoundedCache(settings.memoryBytes)
    this.oci = new OciClient(settings.clock)
  }

  /**
   * Resolves `ref` to one version, downloads and verifies that archive. Throws invalid (unknown
   * chart or version, unsafe archive, refused address), upstream (registry failure).
   */
  async resolve(access: RegistryAccess, ref: ChartRef): Promise<LoadedChart> {
    if (ref.url.protocol === 'oci:') return this.resolveOci(access, ref)
    if (isArchiveUrl(ref.url)) return this.fromArchiveUrl(access, ref, ref.url, undefined)
    if (!ref.name) throw new AppError('invalid', 'a chart from a repository needs its name')
    const location = await this.http.locate(access, ref.url, ref.name, ref.version)
    return this.fromArchiveUrl(access, ref, location.archiveUrl, location.digest ? `sha256:${location.digest}` : undefined)
  }

  /** The archive of a pinned chart: from the disk cache, else downloaded again (with the access `accessOf` gives) and checked against the pinned digest. */
  async load(accessOf: () => Promise<RegistryAccess>, pin: PinnedChart): Promise<LoadedChart> {
    const path = this.pathOf(pin.digest)
    if (!existsSync(path)) {
      const access = await accessOf()
      const bytes = pin.url.startsWith('oci:')
        ? await this.oci.fetchLayer(access, ociRepositoryOf(new URL(pin.url)), pin.digest, this.limits.maxArchiveBytes)
        : await this.download(access, new URL(pin.archiveUrl), new URL(pin.url).host)
      this.store(access, bytes, pin.digest)
    }
    return { pin, path, archive: await this.archiveOf(pin.digest) }
  }

  private async resolveOci(access: RegistryAccess, ref: ChartRef): Promise<LoadedChart> {
    const last = ref.url.pathname.split('/').filter(Boolean).pop() ?? ''
    const repo = ociRepositoryOf(ref.url, !ref.name || last === ref.name ? undefined : ref.name)
    const located = await this.oci.locate(access, repo, ref.version)
    const { digest, archive } = await this.fetchVerified(access, located.layerDigest, () =>
      this.oci.fetchLayer(access, repo, located.layerDigest, this.limits.maxArchiveBytes),
    )
    const meta = metadataOf(archive)
    const url = `oci://${ref.url.host}/${repo.path}`
    return {
      pin: { url, name: meta.name, version: meta.version, digest, archiveUrl: url, deprecated: meta.deprecated ?? false },
      path: this.pathOf(digest),
      archive,
    }
  }

  private async fromArchiveUrl(access: RegistryAccess, ref: ChartRef, archiveUrl: URL, expected: string | undefined): Promise<LoadedChart> {
    const { digest, archive } = await this.fetchVerified(access, expected, () => this.download(access, archiveUrl, ref.url.host))
    const meta = metadataOf(archive)
    if (ref.name && meta.name !== ref.name)
      throw new AppError('invalid', `the archive at ${access.label} holds chart "${meta.name}", not "${ref.name}"`)
    if (isArchiveUrl(ref.url) && ref.version && ref.version !== meta.version)
      throw new AppError('invalid', `the archive at ${access.label} holds version ${meta.version}, not "${ref.version}"`)
    const pin = {
      url: ref.url.href,
      name: meta.name,
      version: meta.version,
      digest,
      archiveUrl: archiveUrl.href,
      deprecated: meta.deprecated ?? false,
    }
    return { pin, path: this.pathOf(digest), archive }
  }

  /** The archive with digest `expected` from the disk cache when it is there, else fetched, verified and kept. */
  private async fetchVerified(
    access: RegistryAccess,
    expected: string | undefined,
    fetchBytes: () => Promise<Uint8Array>,
  ): Promise<{ digest: string; archive: ChartArchive }> {
    if (expected && existsSync(this.pathOf(expected))) return { digest: expected, archive: await this.archiveOf(expected) }
    return this.store(access, await fetchBytes(), expected)
  }

  /** Downloads an archive; the source's credentials go only to `credentialHost` (the repository's host). */
  private async download(access: RegistryAccess, url: URL, credentialHost: string): Promise<Uint8Array> {
    const response = await registryFetch(access, url, {
      headers: { accept: 'application/gzip, application/octet-stream, */*' },
      basicAuth: true,
      credentialHost,
    })
    await expectOk(access, response, 'chart archive')
    return readCapped(access, response, this.limits.maxArchiveBytes, 'chart archive')
  }

  /**
   * Verifies `bytes` (digest when one is expected, then a safe read and the chart checks) and keeps
   * the re-packed reading by digest. The file is written under a temporary name and renamed, so a
   * reader never sees half of it.
   */
  private store(access: RegistryAccess, bytes: Uint8Array, expected: string | undefined): { digest: string; archive: ChartArchive } {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    if (expected && expected !== digest)
      throw new AppError('upstream', `chart registry ${access.label}: the chart archive does not match its digest ${expected}`)
    const archive = checkedRead(bytes, this.limits)
    const path = this.pathOf(digest)
    if (!existsSync(path)) {
      const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`
      writeFileSync(partial, packChartArchive(archive), { mode: 0o600 })
      renameSync(partial, path)
    }
    this.parsed.set(digest, archive, archive.bytes)
    return { digest, archive }
  }

  private async archiveOf(digest: string): Promise<ChartArchive> {
    const known = this.parsed.get(digest)
    if (known) return known
    const archive = checkedRead(new Uint8Array(await Bun.file(this.pathOf(digest)).arrayBuffer()), this.limits)
    this.parsed.set(digest, archive, archive.bytes)
    return archive
  }

  private pathOf(digest: string): string {
    // Digests come from registries too (index.yaml, manifests): only this exact form names a file.
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new AppError('upstream', `a chart registry sent a malformed digest`)
    // `.checked`: archives cached before charts were re-packed held the original bytes; those are never handed to Helm.
    return join(this.settings.cacheDir, `${digest.replace(':', '-')}.checked.tgz`)
  }
}

function metadataOf(archive: ChartArchive) {
  try {
    return chartMetadataOf(archive)
  } catch (error) {
    if (error instanceof UnsafeArchive) throw new AppError('invalid', `refused chart archive: ${error.message}`)
    throw error
  }
}

/** The archive read and checked; throws invalid (422) saying why it is refused. */
function checkedRead(bytes: Uint8Array, limits: ArchiveLimits): ChartArchive {
  try {
    const archive = readChartArchive(bytes, limits)
    checkSchemaReferences(archive)
    return archive
  } catch (error) {
    if (error instanceof UnsafeArchive) throw new AppError('invalid', `refused chart archive: ${error.message}`)
    throw error
  }
}
