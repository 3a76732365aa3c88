/**
 * What differs between resources, as table entries: scope, names, subresources, field labels,
 * defaults and validation. The generic registry asks these entries and nothing else, so a new
 * built-in kind costs one entry in its API group's file beside this one; CustomResourceDefinitions
 * produce entries at run time (apiextensions.ts). This file holds the entry's contract and the
 * checks several groups share.
 */
import { invalidValue, isObject, type KubeObject, required, type StatusCause } from '../../kube'

/** Where a `/scale` subresource reads and writes replicas. */
export interface ScaleSpec {
  specReplicasPath: string[]
  statusReplicasPath: string[]
  labelSelectorPath?: string[]
}

/**
 * Subresources a kind serves. `status`: main-resource writes ignore `.status` and `/status` writes
 * change only `.status`; `scale`: an autoscaling/v1 Scale over the paths named; `log`, `exec`,
 * `attach`, `portforward`: a pod's container output, commands, process and ports.
 */
export interface Subresources {
  status?: true
  scale?: ScaleSpec
  log?: true
  exec?: true
  attach?: true
  portforward?: true
}

/** A column of a CRD's `additionalPrinterColumns`, used for Table output. */
interface PrinterColumn {
  name: string
  type: string
  jsonPath: string
  description?: string
  priority?: number
  format?: string
}

export interface Strategy {
  kind: string
  singular: string
  namespaced: boolean
  shortNames?: string[]
  categories?: string[]
  verbs?: string[]
  /** The subresources served under `{name}/…`; discovery lists them and the server routes to them from here. */
  subresources?: Subresources
  /** Names must be RFC 1123 labels (no dots), not subdomains: namespaces and services. */
  dnsLabelName?: boolean
  /** A custom resource: list items keep apiVersion and kind, as unstructured objects do (built-in lists drop them). */
  custom?: boolean
  /** Built-in Go types accept strategic merge patch; custom resources answer 415. */
  strategicMerge?: boolean
  /** `metadata.generation` bumps when anything outside metadata and status changes. */
  tracksGeneration?: boolean
  /** Delete answers the object (pods, custom resources) rather than a success Status. */
  returnsDeletedObject?: boolean
  /** Field-selector labels beyond `metadata.name` and `metadata.namespace`. */
  fields?: Record<string, (obj: KubeObject) => string>
  printerColumns?: PrinterColumn[]
  /** Called before validation on create: defaults and server-owned fields. Mutates `obj`. */
  prepareForCreate?(obj: KubeObject): void
  /** Called on create and on every write but status writes: defaults and normal forms (`stringData` into `data`). Mutates `obj`. */
  canonicalize?(obj: KubeObject): void
  /** Pure check on create and update; returns one cause per offending field. */
  validate?(obj: KubeObject): StatusCause[]
}

/** What a stored resource serves unless its strategy narrows it. */
export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

/** Reads a dotted path of plain keys, answering '' when absent, as field selectors compare strings. */
export function fieldAt(obj: unknown, path: string[]): unknown {
  let cur: unknown = obj
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined
  return cur
}
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v))
export const at = (path: string) => (obj: KubeObject) => text(fieldAt(obj, path.split('.')))

/** A built-in resource's entry: the versions it is served at and its strategy. */
export interface BuiltinEntry {
  versions: string[]
  strategy: Strategy
}

export function validateContainers(spec: unknown, field: string): StatusCause[] {
  const containers = fieldAt(spec, ['containers'])
  if (!Array.isArray(containers) || !containers.length) return [required(`${field}.containers`)]
  return containers.flatMap((c, i) => [
    ...(isObject(c) && typeof c.name === 'string' && c.name ? [] : [required(`${field}.containers[${i}].name`)]),
    ...(isObject(c) && typeof c.image === 'string' && c.image ? [] : [required(`${field}.containers[${i}].image`)]),
  ])
}

/** A pod spec's containers (regular, init, ephemeral): ports default to `protocol: TCP` as the apiserver's defaulting does. */
export function defaultPodSpec(spec: unknown): void {
  if (!isObject(spec)) return
  for (const field of ['containers', 'initContainers', 'ephemeralContainers'])
    for (const c of Array.isArray(spec[field]) ? spec[field] : [])
      for (const port of isObject(c) && Array.isArray(c.ports) ? c.ports : []) if (isObject(port)) port.protocol ??= 'TCP'
}

/** Defaults of the pod template inside a workload (`spec.template`, or a CronJob's `spec.jobTemplate.spec.template`). */
export const canonicalTemplate =
  (...path: string[]) =>
  (obj: KubeObject) =>
    defaultPodSpec(fieldAt(obj, [...path, 'template', 'spec']))

/** Selector and template rules shared by DaemonSets (no replicas) and the replicated workloads. */
export function validateSelector(obj: KubeObject): StatusCause[] {
  const matchLabels = fieldAt(obj, ['spec', 'selector', 'matchLabels'])
  const templateLabels = fieldAt(obj, ['spec', 'template', 'metadata', 'labels'])
  if (!isObject(fieldAt(obj, ['spec', 'selector']))) return [required('spec.selector')]
  if (isObject(matchLabels) && Object.entries(matchLabels).some(([k, v]) => !isObject(templateLabels) || templateLabels[k] !== v))
    return [invalidValue('spec.template.metadata.labels', templateLabels ?? {}, '`selector` does not match template `labels`')]
  return []
}

const isStringMap = (v: unknown) => v === undefined || (isObject(v) && Object.values(v).every((x) => typeof x === 'string'))
const isStringList = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'))
const isOwnerList = (v: unknown) =>
  v === undefined ||
  (Array.isArray(v) &&
    v.every(
      (o) =>
        isObject(o) &&
        ['apiVersion', 'kind', 'name', 'uid'].every((k) => typeof o[k] === 'string') &&
        (o.controller === undefined || typeof o.controller === 'boolean'),
    ))

/** What the Go decoder would refuse in ObjectMeta, in its wording; undefined when the shape is fine. */
export function metadataDecodeError(meta: Record<string, unknown>): string | undefined {
  const wrong = (field: string, type: string) => `json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} of type ${type}`
  for (const k of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'])
    if (meta[k] !== undefined && typeof meta[k] !== 'string') return wrong(k, 'string')
  if (!isStringMap(meta.labels)) return wrong('labels', 'map[string]string')
  if (!isStringMap(meta.annotations)) return wrong('annotations', 'map[string]string')
  if (!isStringList(meta.finalizers)) return wrong('finalizers', '[]string')
  if (!isOwnerList(meta.ownerReferences)) return wrong('ownerReferences', '[]v1.OwnerReference')
  return undefined
}
