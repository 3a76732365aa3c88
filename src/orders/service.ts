import type { Actor } from '../authz/actor'
import { rfc3339 } from '../clock'
import { AppError } from '../errors'
import type { Page, Paged } from '../http/pagination'
import { isArchiveUrl, type LoadedChart, type PinnedChart } from './charts/client'
import type { RegistryAccess } from './charts/transport'
import { renderKeyOf } from './render/cache'
import { printDoc, type Rendered } from './render/output'
import { convertResources, type DataFormat, marshal } from './render/resources'
import { helm3Script, type ScriptPackage, yamlScript } from './render/scripts'
import type { OrdersRuntime } from './runtime'
import { type ChartSelection, ORDER_API_VERSION, type Order, type OrderInput, type OrderPackage } from './schemas'
import { anonymousAccess, sourceAccess } from './sources/service'
import * as store from './store'
import { renderValues, scriptValues, setFlagsOf } from './values'

export const Messages = {
  missingPackages: 'missing package selection for order',
  bothLists: 'give the packages as spec.packages or as spec.items, not both',
  notFound: 'order not found',
  fileNotFound: 'no such file in the order',
  unknownSource: (name: string) => `chart source "${name}" does not exist`,
  badSourceKind: (kind: string) =>
    `sourceRef.kind "${kind}" is not supported: use HelmRepository (a chart source) or Legacy (a repository URL)`,
  noSource: 'a package needs chart.sourceRef or chart.url',
  badLegacyUrl: 'sourceRef.name of kind Legacy must be an http(s):// or oci:// repository URL',
} as const

/** What the order pins per package when it is created: the chart found and where it came from. */
interface PinnedPackage {
  pin: PinnedChart
  /** The chart source, when the package named one. */
  source?: string
}

interface StoredOrder {
  order: Order
  pinned: PinnedPackage[]
}

interface RenderedPackage {
  chart: ChartSelection
  pinned: PinnedPackage
  loaded: LoadedChart
  rendered: Rendered
}

const packagesOf = (order: Pick<Order, 'spec'>): OrderPackage[] => order.spec.packages ?? order.spec.items ?? []
const NO_NAMESPACE_OBJECT = new Set(['default', 'kube-system', 'kube-node-lease'])

/** The order list as the client sent it; throws badRequest (none or empty), invalid (both lists). */
function packageListOf(input: OrderInput): { key: 'packages' | 'items'; packages: OrderPackage[] } {
  const spec = input.spec ?? {}
  if (spec.packages !== undefined && spec.items !== undefined)
    throw new AppError('invalid', Messages.bothLists, [{ field: 'spec', message: Messages.bothLists }])
  const key = spec.items !== undefined ? 'items' : 'packages'
  const packages = spec[key] ?? []
  if (packages.length === 0) throw new AppError('badRequest', Messages.missingPackages)
  return { key, packages }
}

const field = (i: number, name: string) => `spec.packages[${i}].chart.${name}`

function parseUrl(text: string, fieldName: string, message: string): URL {
  try {
    const url = new URL(text)
    if (/^(https?|oci):$/.test(url.protocol) && !url.username && !url.password) return url
  } catch {
    /* refused below */
  }
  throw new AppError('invalid', message, [{ field: fieldName, message }])
}

/** Where a package's chart is looked up, and with which credentials; throws invalid for an unknown source. */
async function locationOf(
  rt: OrdersRuntime,
  chart: ChartSelection,
  i: number,
): Promise<{ url: URL; access: RegistryAccess; source?: string }> {
  if (chart.url !== undefined) {
    const url = parseUrl(chart.url, field(i, 'url'), 'must be an http(s):// or oci:// URL without credentials')
    return { url, access: anonymousAccess(rt.deps, url) }
  }
  if (!chart.sourceRef) throw new AppError('invalid', Messages.noSource, [{ field: field(i, 'sourceRef'), message: Messages.noSource }])
  const kind = chart.sourceRef.kind || 'HelmRepository'
  if (kind === 'Legacy') {
    const url = parseUrl(chart.sourceRef.name, field(i, 'sourceRef.name'), Messages.badLegacyUrl)
    return { url, access: anonymousAccess(rt.deps, url) }
  }
  if (kind !== 'HelmRepository')
    throw new AppError('invalid', Messages.badSourceKind(kind), [
      { field: field(i, 'sourceRef.kind'), message: Messages.badSourceKind(kind) },
    ])
  const found = await sourceAccess(rt.deps, chart.sourceRef.name)
  if (!found)
    throw new AppError('invalid', Messages.unknownSource(chart.sourceRef.name), [
      { field: field(i, 'sourceRef.name'), message: 'no such chart source' },
    ])
  return { ...found, source: chart.sourceRef.name }
}

/**
 * Stores an order (docs/decisions.md §4): every package's chart is resolved, downloaded, verified and
 * pinned now, so a missing chart or version is 422 and a failing registry 502 at once. The
 * server sets uid, creationTimestamp and (unless given) the name. Throws badRequest, invalid, upstream.
 */
export async function createOrder(rt: OrdersRuntime, actor: Actor, input: OrderInput): Promise<Order> {
  const { key, packages } = packageListOf(input)
  const pinned: PinnedPackage[] = []
  for (const [i, { chart }] of packages.entries()) {
    const where = await locationOf(rt, chart, i)
    const loaded = await rt.charts.resolve(where.access, { url: where.url, name: chart.name, version: chart.version })
    renderValues(rt.values, loaded, chart)
    pinned.push({ pin: loaded.pin, source: where.source })
  }
  const uid = crypto.randomUUID()
  const now = new Date(rt.deps.clock.now())
  const order: Order = {
    apiVersion: ORDER_API_VERSION,
    kind: 'Order',
    metadata: {
      name: input.metadata?.name ?? packages[0]!.chart.releaseName,
      uid,
      creationTimestamp: rfc3339(now),
    },
    spec: { [key]: packages, ...(input.spec?.kubeVersion !== undefined ? { kubeVersion: input.spec.kubeVersion } : {}) },
    status: {},
  }
  await rt.deps.db.write((tx) =>
    store.insertOrder(tx, {
      uid,
      ownerId: actor.user.id,
      body: JSON.stringify(order),
      resolved: JSON.stringify(pinned),
      createdAt: now.getTime(),
    }),
  )
  return order
}

async function loadOrder(rt: OrdersRuntime, actor: Actor, uid: string): Promise<StoredOrder> {
  const row = await store.findOrder(rt.deps.db.read, actor.user.id, uid)
  if (!row) throw new AppError('notFound', Messages.notFound)
  return { order: JSON.parse(row.body) as Order, pinned: JSON.parse(row.resolved) as PinnedPackage[] }
}

/** One of the caller's orders; another user's order is notFound like an unknown uid. */
export async function getOrder(rt: OrdersRuntime, actor: Actor, uid: string): Promise<Order> {
  return (await loadOrder(rt, actor, uid)).order
}

/** The caller's orders, newest first. */
export async function listOrders(rt: OrdersRuntime, actor: Actor, page: Page): Promise<Paged<Order>> {
  const { rows, total } = await store.listOrders(rt.deps.db.read, actor.user.id, page.limit, page.offset)
  return { items: rows.map((r) => JSON.parse(r.body) as Order), total }
}

/** Throws notFound. */
export async function deleteOrder(rt: OrdersRuntime, actor: Actor, uid: string): Promise<void> {
  if (!(await rt.deps.db.write((tx) => store.deleteOrder(tx, actor.user.id, uid)))) throw new AppError('notFound', Messages.notFound)
}

/** The registry access for re-fetching a pinned chart: its source's, or anonymous for a URL (or a source since deleted). */
async function accessForPin(rt: OrdersRuntime, pinned: PinnedPackage): Promise<RegistryAccess> {
  const found = pinned.source ? await sourceAccess(rt.deps, pinned.source) : undefined
  return found?.access ?? anonymousAccess(rt.deps, new URL(pinned.pin.url))
}

/** Renders one package with Helm in one of the caller's slots, or answers it from the render cache. */
async function renderPackage(rt: OrdersRuntime, actor: Actor, chart: ChartSelection, pinned: PinnedPackage): Promise<RenderedPackage> {
  const loaded = await rt.charts.load(() => accessForPin(rt, pinned), pinned.pin)
  const values = renderValues(rt.values, loaded, chart)
  const valuesJson = values === undefined ? undefined : JSON.stringify(values)
  const kubeVersion = rt.helm.settings.kubeVersion
  const key = renderKeyOf({ digest: pinned.pin.digest, valuesJson, release: chart.releaseName, namespace: chart.namespace, kubeVersion })
  const request = { release: chart.releaseName, namespace: chart.namespace, chartPath: loaded.path, valuesJson }
  const rendered = await rt.renders.get(key, () => rt.helm.template(request, String(actor.user.id)))
  return { chart, pinned, loaded, rendered }
}

async function renderOrder(rt: OrdersRuntime, actor: Actor, uid: string): Promise<{ order: Order; packages: RenderedPackage[] }> {
  const { order, pinned } = await loadOrder(rt, actor, uid)
  const packages = await Promise.all(packagesOf(order).map((p, i) => renderPackage(rt, actor, p.chart, pinned[i]!)))
  return { order, packages }
}

const sourceNameOf = (chart: ChartSelection) => chart.sourceRef?.name ?? chart.url ?? ''

/**
 * The order's manifest (reference §1.4): per package a `# Source: <source> - <chart>@<version>`
 * header, then its pre-install hooks, manifests and post-install hooks as Helm prints them.
 */
export async function renderManifest(rt: OrdersRuntime, actor: Actor, uid: string): Promise<string> {
  const { packages } = await renderOrder(rt, actor, uid)
  return packages
    .map(
      ({ chart, pinned, rendered }) =>
        `---\n# Source: ${sourceNameOf(chart)} - ${pinned.pin.name}@${pinned.pin.version}\n${rendered.manifest.map(printDoc).join('')}\n`,
    )
    .join('')
}

/** Where the files the yaml script applies are served (the manifest and CRD routes below the order). */
const filesBase = (rt: OrdersRuntime) => `${rt.deps.config.publicUrl}/api/v1/user/deploy/orders`

interface CrdFile {
  name: string
  filename: string
  object: Record<string, unknown>
}

function crdFilesOf(rendered: Rendered): CrdFile[] {
  return rendered.crds.flatMap((doc) =>
    doc.objects
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((object) => ({ name: String((object.metadata as { name?: unknown } | undefined)?.name ?? ''), filename: doc.source, object })),
  )
}

/** The order's packages converted (reference §1.5); `format` other than json means yaml. */
export async function renderResources(rt: OrdersRuntime, actor: Actor, uid: string, skipCRDs: boolean, format: DataFormat) {
  const { packages } = await renderOrder(rt, actor, uid)
  const base = filesBase(rt)
  return packages.map(({ chart, pinned, rendered }) => {
    const manifestKey = `/${uid}/manifests/${chart.releaseName}.yaml`
    const crds = skipCRDs
      ? []
      : crdFilesOf(rendered).map((crd) => {
          const key = `/${uid}/crds/${crd.name}.yaml`
          // The original marshals the whole stored entry (url, key, filename, data), not the CRD alone.
          return {
            url: base + key,
            key,
            filename: crd.filename,
            data: marshal({ url: base + key, key, filename: crd.filename, data: crd.object }, format),
          }
        })
    return {
      name: pinned.pin.name,
      version: pinned.pin.version,
      sourceRef: chart.sourceRef ?? { name: chart.url ?? '' },
      releaseName: chart.releaseName,
      namespace: chart.namespace,
      crds,
      manifest: { url: base + manifestKey, key: manifestKey },
      resources: convertResources(
        rendered.manifest.flatMap((d) => d.objects),
        chart.releaseName,
        format,
      ),
    }
  })
}

/** The manifest file of one release, as the yaml script applies it: a Namespace first unless the namespace is a built-in one. Throws notFound. */
export async function manifestFile(rt: OrdersRuntime, actor: Actor, uid: string, file: string): Promise<string> {
  const { packages } = await renderOrder(rt, actor, uid)
  const found = packages.find((p) => `${p.chart.releaseName}.yaml` === file)
  if (!found) throw new AppError('notFound', Messages.fileNotFound)
  const ns = found.chart.namespace
  const namespaceDoc = NO_NAMESPACE_OBJECT.has(ns) ? '' : `---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`
  return namespaceDoc + found.rendered.manifest.map(printDoc).join('')
}

/** One CRD of the order as YAML. Throws notFound. */
export async function crdFile(rt: OrdersRuntime, actor: Actor, uid: string, file: string): Promise<string> {
  const { packages } = await renderOrder(rt, actor, uid)
  const crd = packages.flatMap((p) => crdFilesOf(p.rendered)).find((c) => `${c.name}.yaml` === file)
  if (!crd) throw new AppError('notFound', Messages.fileNotFound)
  return marshal(crd.object, 'yaml')
}

function scriptChartOf(pin: PinnedChart): ScriptPackage['chart'] {
  if (pin.url.startsWith('oci:')) return { kind: 'oci', ref: pin.url }
  if (isArchiveUrl(new URL(pin.url))) return { kind: 'archive', url: pin.archiveUrl }
  return { kind: 'repo', repoUrl: pin.url, name: pin.name }
}

const waitsOf = (chart: ChartSelection) => ({
  waitFors: chart.waitFors ?? [],
  ownedCrds: (chart.resources?.owned ?? []).map((g) => ({ group: g.group, resource: g.resource })),
})

/** The Helm 3 install script (reference §1.6); throws invalid for a value a --set flag cannot carry. */
export async function helm3(rt: OrdersRuntime, actor: Actor, uid: string): Promise<string> {
  const { order, pinned } = await loadOrder(rt, actor, uid)
  const packages: ScriptPackage[] = []
  for (const [i, { chart }] of packagesOf(order).entries()) {
    const pin = pinned[i]!
    const loaded = await rt.charts.load(() => accessForPin(rt, pin), pin.pin)
    packages.push({
      release: chart.releaseName,
      namespace: chart.namespace,
      chart: scriptChartOf(pin.pin),
      version: pin.pin.version,
      valuesFlags: setFlagsOf(rt.values.of(loaded), scriptValues(rt.values, loaded, chart)),
      ...waitsOf(chart),
    })
  }
  return helm3Script(packages)
}

/** The kubectl install script (reference §1.7): CRDs and the manifest file of each package, from this server. */
export async function yaml(rt: OrdersRuntime, actor: Actor, uid: string): Promise<string> {
  const { packages } = await renderOrder(rt, actor, uid)
  const base = filesBase(rt)
  return yamlScript(
    packages.map(({ chart, pinned, rendered }) => ({
      release: chart.releaseName,
      namespace: chart.namespace,
      deprecated: pinned.pin.deprecated,
      crdUrls: crdFilesOf(rendered).map((crd) => `${base}/${uid}/crds/${crd.name}.yaml`),
      manifestUrl: `${base}/${uid}/manifests/${chart.releaseName}.yaml`,
      ...waitsOf(chart),
    })),
  )
}

/** The script envelope of the original: one entry per OS, all the same script. */
export function scriptRefs(rt: OrdersRuntime, uid: string, route: 'helm3' | 'yaml', script: string) {
  const url = `${filesBase(rt)}/${uid}/${route}`
  return ['linux', 'darwin'].map((os) => ({ os, url, command: `curl -fsSL ${url} | bash`, script }))
}
