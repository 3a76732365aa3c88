/** What the controllers share: owner references, Events, template hashes, and pods made from templates. */
import { clone, groupVersion, isObject, type JsonObject, type KubeObject, type OwnerReference } from '../../kube'
import type { Registry, Resource } from '../registry'
import { fieldAt } from '../strategies'

export const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

/** A stored resource by group and plural; the controllers only name built-in ones. */
export function resource(reg: Registry, group: string, plural: string): Resource {
  const r = reg.all().find((x) => x.group === group && x.resource === plural)
  if (!r) throw new Error(`no resource ${plural}.${group}`)
  return r
}

export const ownerRef = (r: Resource, obj: KubeObject): OwnerReference => ({
  apiVersion: groupVersion(r.group, r.versions[0]),
  kind: r.strategy.kind,
  name: obj.metadata.name!,
  uid: obj.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
})
export const controllerOf = (obj: KubeObject) => obj.metadata.ownerReferences?.find((o) => o.controller === true)

/** Objects of `r` in `ns` whose controller reference is `owner`. */
export function owned(reg: Registry, r: Resource, ns: string, owner: KubeObject): KubeObject[] {
  return reg.list(r, ns).items.filter((o) => controllerOf(o)?.uid === owner.metadata.uid)
}

export const isRunning = (pod: KubeObject) => fieldAt(pod, ['status', 'phase']) === 'Running' && !pod.metadata.deletionTimestamp
export const phaseOf = (pod: KubeObject) => String(fieldAt(pod, ['status', 'phase']) ?? 'Pending')

let eventSequence = 0n
/** Event names end in a hex timestamp, as the apiserver's recorder makes them, so name order is time order. */
const eventSuffix = () => (BigInt(Date.now()) * 1_000_000n + (eventSequence++ % 1_000_000n)).toString(16)

/** Records a core/v1 Event about `obj` (cluster-scoped objects get theirs in `default`). */
export function recordEvent(
  reg: Registry,
  r: Resource,
  obj: KubeObject,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  component: string,
): void {
  const events = reg.lookup('', 'v1', 'events')
  if (!events) return
  const ns = obj.metadata.namespace || 'default'
  const time = nowIso()
  try {
    reg.create(events, ns, {
      metadata: { name: `${obj.metadata.name}.${eventSuffix()}`, namespace: ns },
      involvedObject: {
        apiVersion: groupVersion(r.group, r.versions[0]),
        kind: r.strategy.kind,
        name: obj.metadata.name,
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: time,
      lastTimestamp: time,
      eventTime: null,
      source: { component },
      reportingComponent: component,
      reportingInstance: '',
    })
  } catch {
    /* the namespace may be going away; losing an event is harmless */
  }
}

/**
 * A template in normal form: nulls, empty objects and empty lists dropped (Go omits them, so
 * `creationTimestamp: null` and `resources: {}` from kubectl mean nothing), keys sorted.
 */
function normalForm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalForm)
  if (!isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v).sort()) {
    const x = normalForm(v[k])
    if (x === null || x === undefined || (isObject(x) && !Object.keys(x).length) || (Array.isArray(x) && !x.length)) continue
    out[k] = x
  }
  return out
}

/** A pod template without the label its controller adds (`pod-template-hash`, `controller-revision-hash`). */
export function withoutLabel(template: unknown, label: string): unknown {
  if (!isObject(template) || !isObject(template.metadata) || !isObject(template.metadata.labels)) return template
  const { [label]: _dropped, ...labels } = template.metadata.labels
  return { ...template, metadata: { ...template.metadata, labels } }
}

/** The hash of a pod template, stable across equivalent forms, in the generateName alphabet. */
export function templateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789'
  let n = BigInt(Bun.hash(JSON.stringify(normalForm(template ?? {}))))
  let out = ''
  for (let i = 0; i < 10; i++) {
    out += alphabet[Number(n % 27n)]
    n /= 27n
  }
  return out
}

/** Creates a pod from `owner`'s template (`spec.template`), owned by it, with extra labels and spec fields. */
export function newPod(
  reg: Registry,
  owner: KubeObject,
  ownerResource: Resource,
  name: { name?: string; generateName?: string },
  extraLabels: Record<string, string> = {},
  extraSpec: JsonObject = {},
): KubeObject {
  const template = clone(fieldAt(owner, ['spec', 'template']) as JsonObject)
  const meta = isObject(template.metadata) ? template.metadata : {}
  return reg.create(resource(reg, '', 'pods'), owner.metadata.namespace!, {
    metadata: {
      ...name,
      namespace: owner.metadata.namespace,
      labels: { ...(meta.labels as Record<string, string> | undefined), ...extraLabels },
      ...(isObject(meta.annotations) ? { annotations: meta.annotations as Record<string, string> } : {}),
      ownerReferences: [ownerRef(ownerResource, owner)],
    },
    spec: { ...(isObject(template.spec) ? template.spec : {}), ...extraSpec },
  })
}

/** Writes `status` through the status subresource when it differs; answers the stored object. */
export function setStatus(reg: Registry, r: Resource, obj: KubeObject, status: JsonObject): KubeObject {
  return reg.update(r, obj.metadata.namespace ?? '', obj.metadata.name!, { ...obj, status }, { subresource: 'status' })
}
