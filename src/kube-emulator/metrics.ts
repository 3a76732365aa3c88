/**
 * metrics.k8s.io/v1beta1 as metrics-server answers it: NodeMetrics for every node and PodMetrics
 * for every running pod, with usage that drifts slowly over time so `kubectl top` looks alive.
 */
import { isObject, type KubeObject, kubeStatus } from '../kube'
import type { VirtualHandler, VirtualRequest } from './context'
import type { Registry, Resource } from './registry'
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from './selectors'
import { fieldAt } from './strategies'

const GROUP = 'metrics.k8s.io'
const VERSION = 'v1beta1'
const WINDOW = '20.035s'

/** Virtual resources of metrics.k8s.io; only get and list, as metrics-server serves. */
export const metricsResources: Resource[] = [
  {
    group: GROUP,
    versions: [VERSION],
    resource: 'nodes',
    virtual: true,
    strategy: { kind: 'NodeMetrics', singular: '', namespaced: false, verbs: ['get', 'list'] },
  },
  {
    group: GROUP,
    versions: [VERSION],
    resource: 'pods',
    virtual: true,
    strategy: { kind: 'PodMetrics', singular: '', namespaced: true, verbs: ['get', 'list'] },
  },
]

/** A stable per-name base value plus a slow wave, so numbers move but stay plausible. */
function usage(seed: string, base: number, spread: number): number {
  const h = Number(Bun.hash(seed) % 1000n) / 1000
  const wave = Math.sin(Date.now() / 60_000 + h * 6.28) * 0.15
  return Math.max(1, Math.round(base * (0.5 + h) * (1 + wave) + spread * h))
}

const timestamp = () => new Date(Math.floor(Date.now() / 15_000) * 15_000).toISOString().replace(/\.\d+Z$/, 'Z')

function nodeMetrics(node: KubeObject): KubeObject {
  const name = node.metadata.name!
  return {
    kind: 'NodeMetrics',
    apiVersion: `${GROUP}/${VERSION}`,
    metadata: { name, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), labels: node.metadata.labels ?? {} },
    timestamp: timestamp(),
    window: WINDOW,
    usage: { cpu: `${usage(`${name}/cpu`, 400_000_000, 100_000_000)}n`, memory: `${usage(`${name}/mem`, 1_800_000, 200_000)}Ki` },
  }
}

function podMetrics(pod: KubeObject): KubeObject {
  const { name, namespace } = pod.metadata
  const containers = fieldAt(pod, ['spec', 'containers'])
  return {
    kind: 'PodMetrics',
    apiVersion: `${GROUP}/${VERSION}`,
    metadata: { name, namespace, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), labels: pod.metadata.labels ?? {} },
    timestamp: timestamp(),
    window: WINDOW,
    containers: (Array.isArray(containers) ? containers.filter(isObject) : []).map((c) => ({
      name: c.name,
      usage: {
        cpu: `${usage(`${namespace}/${name}/${String(c.name)}/cpu`, 4_000_000, 1_000_000)}n`,
        memory: `${usage(`${namespace}/${name}/${String(c.name)}/mem`, 24_000, 4_000)}Ki`,
      },
    })),
  }
}

/** Handlers keyed `group/resource`, reading nodes and pods from the registry. */
export function metricsHandlers(reg: Registry): [string, VirtualHandler][] {
  const source = (resource: string) => reg.lookup('', 'v1', resource)!
  const serve = (resource: 'nodes' | 'pods', render: (o: KubeObject) => KubeObject, plural: string) => (req: VirtualRequest) => {
    const r = source(resource)
    const running = (o: KubeObject) => resource === 'nodes' || fieldAt(o, ['status', 'phase']) === 'Running'
    if (req.info.name) {
      let obj: KubeObject | undefined
      try {
        obj = reg.get(r, req.info.namespace, req.info.name)
      } catch {
        obj = undefined
      }
      if (!obj || !running(obj)) throw kubeStatus.notFound({ group: GROUP, resource: plural }, req.info.name)
      return { code: 200, body: render(obj) }
    }
    const labels = parseLabelSelector(req.query.get('labelSelector') ?? '')
    const fields = parseFieldSelector(req.query.get('fieldSelector') ?? '')
    for (const f of fields)
      if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace')
        throw kubeStatus.badRequest(`field label not supported: ${f.field}`)
    const items = reg
      .list(r, req.info.namespace)
      .items.filter(
        (o) => running(o) && matchesLabels(labels, o.metadata.labels) && matchesFields(fields, (f) => String(o.metadata[f.slice(9)] ?? '')),
      )
      .map(render)
    return { code: 200, body: { kind: `${req.resource.strategy.kind}List`, apiVersion: `${GROUP}/${VERSION}`, metadata: {}, items } }
  }
  return [
    [`${GROUP}/nodes`, serve('nodes', nodeMetrics, 'nodemetrics')],
    [`${GROUP}/pods`, serve('pods', podMetrics, 'podmetrics')],
  ]
}
