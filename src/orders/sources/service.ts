import type { ChartSourceSeed } from '../../config'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { EgressRefused, resolveChecked } from '../../net/egress'
import { type RegistryAccess, registryPolicy } from '../charts/transport'
import type { ChartSource, ChartSourceSpec, ChartSourceUpdate } from './schemas'
import type { ChartSourceRow, NewChartSource } from './store'
import * as store from './store'

const Messages = {
  notFound: 'chart source not found',
  nameMismatch: 'must equal the name in the path',
  credentialsInUrl: 'credentials belong in username and password, not in the URL',
} as const

/** A source as answered: the password never leaves the server. */
function present(row: ChartSourceRow): ChartSource {
  return {
    name: row.name,
    url: row.url,
    username: row.username ?? '',
    password: '',
    caData: row.caData ?? '',
    insecureSkipTLSVerify: row.insecureSkipTlsVerify,
  }
}

/**
 * Refuses a URL with credentials in it and, unless PLATFORM_ALLOW_PRIVATE_REGISTRIES is set, a
 * host that resolves to a loopback, link-local or private address. Throws invalid (422).
 */
async function checkUrl(deps: Deps, text: string): Promise<void> {
  const url = new URL(text)
  if (url.username || url.password)
    throw new AppError('invalid', 'Validation Failed', [{ field: 'url', message: Messages.credentialsInUrl }])
  const probe = new URL(url.href.replace(/^oci:/, 'https:'))
  try {
    await resolveChecked(probe, registryPolicy({ allowPrivate: deps.config.orders.allowPrivateRegistries }))
  } catch (error) {
    if (error instanceof EgressRefused)
      throw new AppError('invalid', `chart source URL refused: ${error.message}`, [{ field: 'url', message: error.message }])
    throw error
  }
}

async function rowOf(deps: Deps, spec: Omit<ChartSourceSpec, 'name'>, keptPassword: string | null): Promise<Omit<NewChartSource, 'name'>> {
  return {
    url: spec.url,
    username: spec.username || null,
    sealedPassword: spec.password ? await deps.secrets.seal(spec.password) : keptPassword,
    caData: spec.caData || null,
    insecureSkipTlsVerify: spec.insecureSkipTLSVerify ?? false,
  }
}

export async function listSources(deps: Deps): Promise<ChartSource[]> {
  return (await store.listSources(deps.db.read)).map(present)
}

/** Throws notFound. */
export async function getSource(deps: Deps, name: string): Promise<ChartSource> {
  const row = await store.findSource(deps.db.read, name)
  if (!row) throw new AppError('notFound', Messages.notFound)
  return present(row)
}

/** Adds a source; throws invalid (refused URL), conflict (name taken). */
export async function createSource(deps: Deps, spec: ChartSourceSpec): Promise<ChartSource> {
  await checkUrl(deps, spec.url)
  const row = { name: spec.name, ...(await rowOf(deps, spec, null)) }
  return present(await deps.db.write((tx) => store.insertSource(tx, row)))
}

/** Replaces a source's settings; an empty or absent password keeps the stored one. Throws notFound, invalid. */
export async function replaceSource(deps: Deps, name: string, spec: ChartSourceUpdate): Promise<ChartSource> {
  if (spec.name !== undefined && spec.name !== name)
    throw new AppError('invalid', 'Validation Failed', [{ field: 'name', message: Messages.nameMismatch }])
  const current = await store.findSource(deps.db.read, name)
  if (!current) throw new AppError('notFound', Messages.notFound)
  await checkUrl(deps, spec.url)
  const changes = await rowOf(deps, spec, current.sealedPassword)
  const updated = await deps.db.write((tx) => store.updateSource(tx, name, changes))
  if (!updated) throw new AppError('notFound', Messages.notFound)
  return present(updated)
}

/** Throws notFound. */
export async function deleteSource(deps: Deps, name: string): Promise<void> {
  if (!(await deps.db.write((tx) => store.deleteSource(tx, name)))) throw new AppError('notFound', Messages.notFound)
}

/** Writes PLATFORM_CHART_SOURCES into the table (the environment wins over earlier edits of the same name). */
export async function seedSources(deps: Deps, seeds: ChartSourceSeed[]): Promise<void> {
  for (const seed of seeds) {
    const row = { name: seed.name, ...(await rowOf(deps, seed, null)) }
    await deps.db.write((tx) => store.upsertSource(tx, row))
  }
}

/** How the chart client reaches a registry: the named source's settings, credentials opened. */
export async function sourceAccess(deps: Deps, name: string): Promise<{ url: URL; access: RegistryAccess } | undefined> {
  const row = await store.findSource(deps.db.read, name)
  if (!row) return undefined
  const url = new URL(row.url)
  return {
    url,
    access: {
      label: `"${row.name}" (${url.protocol}//${url.host})`,
      username: row.username ?? undefined,
      password: row.sealedPassword ? await deps.secrets.open(row.sealedPassword) : undefined,
      caData: row.caData ?? undefined,
      insecureSkipTlsVerify: row.insecureSkipTlsVerify,
      allowPrivate: deps.config.orders.allowPrivateRegistries,
      timeoutMs: deps.config.orders.chartFetchTimeoutMs,
    },
  }
}

/** Access for a URL given in a package (no source): anonymous, system CAs. */
export function anonymousAccess(deps: Deps, url: URL): RegistryAccess {
  return {
    label: `${url.protocol}//${url.host}`,
    insecureSkipTlsVerify: false,
    allowPrivate: deps.config.orders.allowPrivateRegistries,
    timeoutMs: deps.config.orders.chartFetchTimeoutMs,
  }
}
