import { join } from 'node:path'
import { type Deps, runtimeSlot } from '../deps'
import { DEFAULT_ARCHIVE_LIMITS } from './charts/archive'
import { ChartClient } from './charts/client'
import { RenderCache } from './render/cache'
import { HelmRenderer } from './render/helm'
import { seedSources } from './sources/service'

/** What the orders area keeps for the life of the app: the chart client with its caches, Helm, the render cache. */
export interface OrdersRuntime {
  deps: Deps
  charts: ChartClient
  helm: HelmRenderer
  renders: RenderCache
  /** Settles once PLATFORM_CHART_SOURCES is in the table; source routes wait for it. */
  seeded: Promise<void>
}

/** Renders kept in memory; a render is the parsed output of one chart, typically tens of kB. */
const RENDER_CACHE_ENTRIES = 256

function createOrdersRuntime(deps: Deps): OrdersRuntime {
  const settings = deps.config.orders
  return {
    deps,
    charts: new ChartClient(join(deps.config.dataDir, 'charts'), DEFAULT_ARCHIVE_LIMITS),
    helm: new HelmRenderer({
      helmPath: deps.config.helmPath,
      timeoutMs: settings.helmTimeoutMs,
      memoryBytes: settings.helmMemoryBytes,
      kubeVersion: settings.kubeVersion,
      concurrency: 4,
    }),
    renders: new RenderCache(RENDER_CACHE_ENTRIES),
    seeded: seedSources(deps, settings.chartSources).catch((error: unknown) => {
      deps.log.error('seeding PLATFORM_CHART_SOURCES failed', { error: error instanceof Error ? error.message : String(error) })
    }),
  }
}

const ORDERS = runtimeSlot('orders', createOrdersRuntime)

/** The orders runtime of this app, made on first use. */
export const ordersRuntime = (deps: Deps): OrdersRuntime => deps.runtimes.of(ORDERS)
