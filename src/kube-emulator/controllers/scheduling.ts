/**
 * The scheduler's filters: cordoned nodes, `nodeSelector`, required node affinity (`matchExpressions`
 * on labels, `matchFields` on `metadata.name`) and taints with `NoSchedule`/`NoExecute` a pod does
 * not tolerate. A pod that fits nowhere gets the scheduler's summary, e.g. `0/2 nodes are available:
 * 2 node(s) didn't match Pod's node affinity/selector. …`.
 */
import { isObject, type KubeObject } from '../../kube'
import { fieldAt } from '../strategies'

const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isObject) : [])
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])

/** One `matchExpressions`/`matchFields` requirement against a value (undefined when absent). */
function requirementHolds(req: Record<string, unknown>, value: string | undefined): boolean {
  const values = strings(req.values)
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value)
    case 'NotIn':
      return value === undefined || !values.includes(value)
    case 'Exists':
      return value !== undefined
    case 'DoesNotExist':
      return value === undefined
    case 'Gt':
      return value !== undefined && Number(value) > Number(values[0])
    case 'Lt':
      return value !== undefined && Number(value) < Number(values[0])
    default:
      return false
  }
}

function matchesAffinity(pod: KubeObject, node: KubeObject): boolean {
  const labels = node.metadata.labels ?? {}
  const selector = fieldAt(pod, ['spec', 'nodeSelector'])
  if (isObject(selector) && Object.entries(selector).some(([k, v]) => labels[k] !== v)) return false
  const terms = list(
    fieldAt(pod, ['spec', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms']),
  )
  if (!terms.length) return true
  // Terms are ORed; the requirements inside one term are ANDed.
  return terms.some(
    (t) =>
      list(t.matchExpressions).every((e) =>
        requirementHolds(e, Object.hasOwn(labels, String(e.key)) ? labels[String(e.key)] : undefined),
      ) && list(t.matchFields).every((f) => requirementHolds(f, f.key === 'metadata.name' ? node.metadata.name : undefined)),
  )
}

/** Whether a toleration covers a taint (empty key with Exists tolerates everything). */
function tolerates(t: Record<string, unknown>, taint: Record<string, unknown>): boolean {
  if (t.effect && t.effect !== taint.effect) return false
  if (t.key ? t.key !== taint.key : t.operator !== 'Exists') return false
  return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '')
}

/** Why `pod` cannot go to `node`, in the scheduler's per-node words; undefined when it fits. */
export function misfit(pod: KubeObject, node: KubeObject): string | undefined {
  const tolerations = list(fieldAt(pod, ['spec', 'tolerations']))
  const taints = list(fieldAt(node, ['spec', 'taints']))
  if (
    fieldAt(node, ['spec', 'unschedulable']) === true &&
    !tolerations.some((t) => tolerates(t, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }))
  )
    return 'node(s) were unschedulable'
  if (!matchesAffinity(pod, node)) return "node(s) didn't match Pod's node affinity/selector"
  const untolerated = taints.find(
    (taint) => (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerations.some((t) => tolerates(t, taint)),
  )
  if (untolerated) return `node(s) had untolerated taint {${String(untolerated.key)}: ${String(untolerated.value ?? '')}}`
  return undefined
}

/** The nodes `pod` fits, or the scheduler's FailedScheduling message when there is none. */
export function feasibleNodes(pod: KubeObject, nodes: KubeObject[]): { nodes: KubeObject[]; message: string } {
  const fit = nodes.filter((n) => misfit(pod, n) === undefined)
  const counts = new Map<string, number>()
  for (const n of nodes) {
    const why = misfit(pod, n)
    if (why) counts.set(why, (counts.get(why) ?? 0) + 1)
  }
  const reasons = [...counts.entries()].map(([why, n]) => `${n} ${why}`).sort()
  const total = nodes.length
  if (!total) return { nodes: fit, message: 'no nodes available to schedule pods' }
  const message = `0/${total} nodes are available: ${reasons.join(', ')}. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`
  return { nodes: fit, message }
}
