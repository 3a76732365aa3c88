import { join } from 'node:path'
import { type Deps, runtimeSlot } from '../deps'
import { messageOf } from '../errors'
import { DEFAULT_ARCHIVE_LIMITS } from './charts/archive'
import { ChartClient } from './charts/client'
import { unpackBundledHelm } from './render/bundled-helm'
import { RenderCache } from './render/cache'
import { HelmRenderer } from './render/helm'
import { seedSources } from './sources/service'
import { ValuesFiles } from './values'

/** What the orders area keeps for the life of the app: the chart client with its caches, Helm, the render and values caches. */
export interface OrdersRuntime {
  deps: Deps
  charts: ChartClient
  helm: HelmRenderer
  renders: RenderCache
  values: ValuesFiles
  /** Settles once PLATFORM_CHART_SOURCES is in the table; source routes wait for it. */
  seeded: Promise<void>
}

/**
 * What the orders caches may hold, in bytes (docs/security.md, "Charts and rendering"): any
 * signed-in user can name a chart, so the bounds are on bytes, never on a number of entries. A
 * chart counts its expanded archive (up to 100 MiB), a render and a values file their text times
 * the weights in render/cache.ts and values.ts. PLATFORM_CHART_CACHE_MB sizes all three.
 */
const cacheBounds = (chartBytes: number) => ({ charts: chartBytes, renders: chartBytes / 4, values: chartBytes / 8 })

/** Helm processes at once (the machine's cores are the limit), per caller, and renders that may wait. */
const HELM_SLOTS = { total: 4, perCaller: 2, waitingTotal: 64, waitingPerCaller: 16 }

function createOrdersRuntime(deps: Deps): OrdersRuntime {
  const settings = deps.config.orders
  const bounds = cacheBounds(settings.chartCacheBytes)
  return {
    deps,
    charts: new ChartClient({
      cacheDir: join(deps.config.dataDir, 'charts'),
      limits: DEFAULT_ARCHIVE_LIMITS,
      memoryBytes: bounds.charts,
      clock: deps.clock,
    }),
    helm: new HelmRenderer(
      {
        helmPath: deps.config.helmPath,
        install: deps.config.helmBundled ? () => unpackBundledHelm(deps.config.helmPath) : undefined,
        timeoutMs: settings.helmTimeoutMs,
        memoryBytes: settings.helmMemoryBytes,
        kubeVersion: settings.kubeVersion,
        slots: HELM_SLOTS,
      },
      deps.log,
    ),
    renders: new RenderCache(bounds.renders),
    values: new ValuesFiles(bounds.values),
    seeded: seedSources(deps, settings.chartSources).catch((error: unknown) => {
      deps.log.error('seeding PLATFORM_CHART_SOURCES failed', { error: messageOf(error) })
    }),
  }
}

const ORDERS = runtimeSlot('orders', createOrdersRuntime, (rt) => rt.helm.close())

/** The orders runtime of this app, made on first use. */
export const ordersRuntime = (deps: Deps): OrdersRuntime => deps.runtimes.of(ORDERS)
