/**
 * The generic store: every resource's create, get, list, update, delete and watch history,
 * implemented once over group/resource and configured by its `Strategy`. All operations are
 * synchronous, so a read-check-write (optimistic concurrency, patch) can never interleave with
 * another request: 50 parallel updates with one resourceVersion give exactly one winner.
 */
import { clone, type GroupResource, isObject, type KubeObject, kubeStatus, type OwnerReference, validateName } from '../kube'
import { deepEqual } from './patch'
import { type FieldRequirement, type LabelRequirement, matchesFields, matchesLabels } from './selectors'
import { ALL_VERBS, metadataDecodeError, type Strategy } from './strategies'

/** A resource the server knows: stored ones live here, virtual ones only answer requests. */
export interface Resource {
  group: string
  versions: string[]
  resource: string
  strategy: Strategy
  /** Served by a handler (metrics, reviews, AppsCode renders) rather than the store. */
  virtual?: boolean
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED'
export interface StoreEvent {
  type: EventType
  resource: Resource
  object: KubeObject
  previous?: KubeObject
  rv: number
}

export interface ListOptions {
  labels?: LabelRequirement[]
  fields?: FieldRequirement[]
  limit?: number
  continueToken?: string
}
export interface ListResult {
  items: KubeObject[]
  resourceVersion: string
  continueToken?: string
  remainingItemCount?: number
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string }
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  dryRun?: boolean
}
export interface WriteOptions {
  dryRun?: boolean
  subresource?: 'status'
}

/** The apiserver's words when a continue token outlived the history its list was cut from. */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'
const GENERATE_ATTEMPTS = 8

/** Random suffix in the alphabet apimachinery uses for generateName (no vowels, no look-alikes). */
export function randomSuffix(length = 5): string {
  let s = ''
  for (let i = 0; i < length; i++) s += NAME_ALPHABET[(Math.random() * NAME_ALPHABET.length) | 0]
  return s
}

/** The group and plural resource that Status messages name. */
export const groupResource = (r: Resource): GroupResource => ({ group: r.group, resource: r.resource })
const resourceKey = (group: string, resource: string) => `${group}/${resource}`
const objectKey = (ns: string, name: string) => `${ns}/${name}`
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

/** Splits an object into what `generation` tracks: everything but metadata and status. */
function specPart(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj
  return rest
}

function encodeContinue(rv: number, after: string): string {
  return Buffer.from(JSON.stringify({ v: 'emulator.k8s/v1', rv, start: after })).toString('base64url')
}
function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
    if (isObject(parsed) && parsed.v === 'emulator.k8s/v1' && typeof parsed.rv === 'number' && typeof parsed.start === 'string')
      return { rv: parsed.rv, start: parsed.start }
  } catch {
    /* falls through to the 400 below */
  }
  throw kubeStatus.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version emulator.k8s/v1)')
}

/** All resources and their objects, one global resourceVersion counter and a bounded change history. */
export class Registry {
  private rv = 0
  private readonly resources = new Map<string, Resource>()
  private readonly objects = new Map<string, Map<string, KubeObject>>()
  private readonly history: StoreEvent[] = []
  /** Highest resourceVersion dropped from history; watching from at or below it is 410 Expired. */
  private compactedRv = 0
  private readonly listeners = new Set<(e: StoreEvent) => void>()

  constructor(private readonly historyLimit = 5000) {}

  register(r: Resource): void {
    this.resources.set(resourceKey(r.group, r.resource), r)
    if (!r.virtual && !this.objects.has(resourceKey(r.group, r.resource))) this.objects.set(resourceKey(r.group, r.resource), new Map())
  }

  /** Drops a resource and all its objects (a CRD went away). */
  unregister(group: string, resource: string): void {
    this.resources.delete(resourceKey(group, resource))
    this.objects.delete(resourceKey(group, resource))
  }

  all(): Resource[] {
    return [...this.resources.values()]
  }

  /** The resource serving `group/version/resource`, or undefined when no such path exists. */
  lookup(group: string, version: string, resource: string): Resource | undefined {
    const r = this.resources.get(resourceKey(group, resource))
    return r?.versions.includes(version) ? r : undefined
  }

  currentResourceVersion(): string {
    return String(this.rv)
  }

  /** Listeners of store events: open watches plus the controllers. */
  get subscriberCount(): number {
    return this.listeners.size
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Events after `rv`, or 'expired' when history no longer reaches back that far. */
  eventsSince(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compactedRv) return 'expired'
    return this.history.filter((e) => e.rv > rv)
  }

  oldestResourceVersion(): number {
    return this.compactedRv + 1
  }

  private table(r: Resource): Map<string, KubeObject> {
    const t = this.objects.get(resourceKey(r.group, r.resource))
    if (!t) throw kubeStatus.pathNotFound()
    return t
  }

  private emit(type: EventType, resource: Resource, object: KubeObject, previous?: KubeObject): void {
    const event: StoreEvent = { type, resource, object: clone(object), previous, rv: this.rv }
    this.history.push(event)
    while (this.history.length > this.historyLimit) this.compactedRv = this.history.shift()!.rv
    for (const fn of this.listeners) fn(event)
  }

  private requireNamespace(r: Resource, ns: string): void {
    if (!r.strategy.namespaced) return
    const nsResource = this.resources.get(resourceKey('', 'namespaces'))
    if (nsResource && !this.table(nsResource).has(objectKey('', ns))) throw kubeStatus.notFound({ group: '', resource: 'namespaces' }, ns)
  }

  /** Creates `obj` under `ns` ('' when cluster-scoped). Throws alreadyExists, invalid, notFound (namespace), badRequest. */
  create(r: Resource, ns: string, input: KubeObject, opts: WriteOptions & { keepStatus?: boolean; uid?: string } = {}): KubeObject {
    // Stored objects carry no apiVersion or kind: `present` adds those of the version asked for.
    const { apiVersion: _a, kind: _k, ...obj } = clone(input)
    const meta = obj.metadata
    const decodeError = metadataDecodeError(meta)
    if (decodeError) throw kubeStatus.badRequest(decodeError)
    if (r.strategy.namespaced) {
      if (meta.namespace && meta.namespace !== ns)
        throw kubeStatus.badRequest('the namespace of the provided object does not match the namespace sent on the request')
      meta.namespace = ns
    } else delete meta.namespace
    this.requireNamespace(r, ns)
    const table = this.table(r)
    if (!meta.name && meta.generateName) meta.name = this.generateName(table, ns, meta.generateName)
    // Clients cannot set status on create when the type has a status subresource; internal
    // writers (seed, controllers) pass keepStatus to create objects as a kubelet would report them.
    const status = obj.status
    if (r.strategy.subresources?.status) delete obj.status
    // The uid exists before defaulting, as some defaults name it (a Job's selector). Internal
    // writers may fix it (the sandbox keeps its kube-system uid, its cluster identity, across restarts).
    meta.uid = opts.uid ?? crypto.randomUUID()
    r.strategy.prepareForCreate?.(obj)
    r.strategy.canonicalize?.(obj)
    if (opts.keepStatus && status !== undefined) obj.status = status
    this.validate(r, obj)
    if (table.has(objectKey(ns, meta.name!))) throw kubeStatus.alreadyExists(groupResource(r), meta.name!)
    obj.metadata = this.stamp(r, meta, opts.dryRun ? this.rv : this.rv + 1)
    if (opts.dryRun) return obj
    this.rv++
    table.set(objectKey(ns, meta.name!), obj)
    this.emit('ADDED', r, obj)
    return clone(obj)
  }

  /** `generateName` plus a random suffix, retried a few times on collision as the apiserver does. */
  private generateName(table: Map<string, KubeObject>, ns: string, prefix: string): string {
    let name = ''
    for (let i = 0; i < GENERATE_ATTEMPTS && (!name || table.has(objectKey(ns, name))); i++) name = prefix.slice(0, 58) + randomSuffix()
    return name
  }

  /** Server-filled metadata (uid, resourceVersion, generation, creationTimestamp), written name first as a real server does. */
  private stamp(r: Resource, meta: KubeObject['metadata'], rv: number): KubeObject['metadata'] {
    const {
      name,
      generateName,
      namespace,
      uid,
      resourceVersion: _r,
      creationTimestamp: _c,
      deletionTimestamp: _d,
      generation: _g,
      ...rest
    } = meta
    return {
      name,
      ...(generateName ? { generateName } : {}),
      ...(namespace ? { namespace } : {}),
      uid: uid ?? crypto.randomUUID(),
      resourceVersion: String(rv),
      ...(r.strategy.tracksGeneration ? { generation: 1 } : {}),
      creationTimestamp: now(),
      ...rest,
    }
  }

  private validate(r: Resource, obj: KubeObject): void {
    const meta = obj.metadata
    const decodeError = metadataDecodeError(meta)
    if (decodeError) throw kubeStatus.badRequest(decodeError)
    const causes = [...validateName(meta.name, r.strategy.dnsLabelName === true), ...(r.strategy.validate?.(obj) ?? [])]
    const controllers = (meta.ownerReferences ?? []).filter((o) => o.controller === true)
    if (controllers.length > 1)
      causes.push({
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "[]": Only one reference can have Controller set to true',
        field: 'metadata.ownerReferences',
      })
    if (causes.length) throw kubeStatus.invalid({ group: r.group, kind: r.strategy.kind }, meta.name ?? '', causes)
  }

  /** The stored object; throws notFound. */
  get(r: Resource, ns: string, name: string): KubeObject {
    const obj = this.table(r).get(objectKey(r.strategy.namespaced ? ns : '', name))
    if (!obj) throw kubeStatus.notFound(groupResource(r), name)
    return clone(obj)
  }

  /** Objects in `ns` (all namespaces when ''), filtered and paged; every page carries the first page's resourceVersion. */
  list(r: Resource, ns: string, opts: ListOptions = {}): ListResult {
    const start = opts.continueToken ? decodeContinue(opts.continueToken) : undefined
    if (start && start.rv < this.compactedRv) throw kubeStatus.expired(CONTINUE_EXPIRED)
    const listRv = start ? start.rv : this.rv
    const keys = [...this.table(r).keys()].sort()
    const selected = keys
      .filter((k) => (!ns || !r.strategy.namespaced || k.startsWith(`${ns}/`)) && (!start || k > start.start))
      .map((k) => this.table(r).get(k)!)
      .filter((o) => this.matches(r, o, opts))
    const limit = opts.limit && opts.limit > 0 ? opts.limit : selected.length
    const page = selected.slice(0, limit)
    const more = selected.length > page.length
    const last = page[page.length - 1]
    return {
      items: page.map(clone),
      resourceVersion: String(listRv),
      ...(more && last ? { continueToken: encodeContinue(listRv, objectKey(last.metadata.namespace ?? '', last.metadata.name!)) } : {}),
      ...(more && !opts.labels?.length && !opts.fields?.length ? { remainingItemCount: selected.length - page.length } : {}),
    }
  }

  /** Whether an object passes label and field selectors (watch uses it for transitions). */
  matches(r: Resource, obj: KubeObject, opts: ListOptions): boolean {
    return matchesLabels(opts.labels ?? [], obj.metadata.labels) && matchesFields(opts.fields ?? [], (f) => fieldValue(r, obj, f))
  }

  /**
   * Replaces the object. A `metadata.resourceVersion` that differs from the stored one is a 409;
   * without one the update is unconditional. Status-subresource rules keep the other half intact.
   * Throws notFound, conflict, invalid, badRequest.
   */
  update(r: Resource, ns: string, name: string, input: KubeObject, opts: WriteOptions = {}): KubeObject {
    const scopedNs = r.strategy.namespaced ? ns : ''
    const old = this.get(r, scopedNs, name)
    const obj = clone(input)
    if (!isObject(obj.metadata)) obj.metadata = {}
    if (obj.metadata.name && obj.metadata.name !== name)
      throw kubeStatus.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`)
    if (r.strategy.namespaced && obj.metadata.namespace && obj.metadata.namespace !== ns)
      throw kubeStatus.badRequest('the namespace of the provided object does not match the namespace sent on the request')
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion)
      throw kubeStatus.conflict(groupResource(r), name)
    const next = this.mergeForUpdate(r, old, obj, opts.subresource)
    if (opts.subresource !== 'status') r.strategy.canonicalize?.(next)
    this.validate(r, next)
    if (deepEqual(next, old)) return old
    if (opts.dryRun) return next
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) return this.remove(r, old)
    next.metadata.resourceVersion = String(++this.rv)
    this.table(r).set(objectKey(scopedNs, name), next)
    this.emit('MODIFIED', r, next, old)
    return clone(next)
  }

  /** Server-owned metadata always comes from the stored object; status or spec from the right side. */
  private mergeForUpdate(r: Resource, old: KubeObject, obj: KubeObject, subresource?: 'status'): KubeObject {
    const keep = {
      uid: old.metadata.uid,
      creationTimestamp: old.metadata.creationTimestamp,
      name: old.metadata.name,
      namespace: old.metadata.namespace,
      resourceVersion: old.metadata.resourceVersion,
      generation: old.metadata.generation,
      deletionTimestamp: old.metadata.deletionTimestamp,
    }
    let next: KubeObject
    if (subresource === 'status') next = { ...old, status: obj.status }
    else {
      next = { ...obj, metadata: { ...obj.metadata } }
      if (r.strategy.subresources?.status) next.status = old.status
      if (next.status === undefined) delete next.status
    }
    for (const [k, v] of Object.entries(keep)) {
      if (v === undefined) delete next.metadata[k]
      else next.metadata[k] = v
    }
    delete next.apiVersion
    delete next.kind
    if (r.strategy.tracksGeneration && !deepEqual(specPart(next), specPart(old)))
      next.metadata.generation = (old.metadata.generation ?? 0) + 1
    return next
  }

  /**
   * Deletes, or marks for deletion while finalizers remain. Returns the object as it ends up and
   * whether it is gone. Dependents are left to the garbage collector (controllers.ts), except under
   * Orphan, where their owner references are cut right away. Throws notFound, conflict.
   */
  delete(r: Resource, ns: string, name: string, opts: DeleteOptions = {}): { object: KubeObject; gone: boolean } {
    const old = this.get(r, ns, name)
    const pre = opts.preconditions
    if (pre?.uid && pre.uid !== old.metadata.uid)
      throw kubeStatus.conflict(
        groupResource(r),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
      )
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion)
      throw kubeStatus.conflict(
        groupResource(r),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      )
    if (opts.dryRun) return { object: old, gone: true }
    if (opts.propagationPolicy === 'Orphan') this.orphanDependents(old.metadata.uid!)
    if (old.metadata.finalizers?.length) {
      if (old.metadata.deletionTimestamp) return { object: old, gone: false }
      const marked = {
        ...old,
        metadata: { ...old.metadata, deletionTimestamp: now(), deletionGracePeriodSeconds: 0, resourceVersion: String(++this.rv) },
      }
      this.table(r).set(objectKey(r.strategy.namespaced ? ns : '', name), marked)
      this.emit('MODIFIED', r, marked, old)
      return { object: clone(marked), gone: false }
    }
    return { object: this.remove(r, old), gone: true }
  }

  private remove(r: Resource, old: KubeObject): KubeObject {
    this.table(r).delete(objectKey(old.metadata.namespace ?? '', old.metadata.name!))
    const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } }
    this.emit('DELETED', r, gone)
    return clone(gone)
  }

  private orphanDependents(uid: string): void {
    for (const r of this.all()) {
      if (r.virtual) continue
      for (const obj of this.table(r).values()) {
        const refs = obj.metadata.ownerReferences
        if (!refs?.some((o) => o.uid === uid)) continue
        this.update(r, obj.metadata.namespace ?? '', obj.metadata.name!, withoutOwner(obj, uid))
      }
    }
  }

  /** Objects (in any stored resource) whose ownerReferences name `uid`. */
  dependentsOf(uid: string): { resource: Resource; object: KubeObject }[] {
    const out: { resource: Resource; object: KubeObject }[] = []
    for (const r of this.all()) {
      if (r.virtual) continue
      for (const obj of this.table(r).values())
        if (obj.metadata.ownerReferences?.some((o: OwnerReference) => o.uid === uid)) out.push({ resource: r, object: clone(obj) })
    }
    return out
  }

  /** Deletes every object a list with the same options would return; answers the deleted objects. */
  deleteCollection(r: Resource, ns: string, list: ListOptions, opts: DeleteOptions = {}): KubeObject[] {
    const { items } = this.list(r, ns, { labels: list.labels, fields: list.fields })
    return items.map((o) => this.delete(r, o.metadata.namespace ?? '', o.metadata.name!, opts).object)
  }
}

/** The object with the owner reference to `uid` cut; the field goes when none remains, as on a real server. */
export function withoutOwner(obj: KubeObject, uid: string): KubeObject {
  const { ownerReferences, ...meta } = obj.metadata
  const remaining = (ownerReferences ?? []).filter((o) => o.uid !== uid)
  return { ...obj, metadata: remaining.length ? { ...meta, ownerReferences: remaining } : meta }
}

/** A field-selector label's value; unsupported labels are a 400 like on a real server. */
function fieldValue(r: Resource, obj: KubeObject, field: string): string {
  if (field === 'metadata.name') return obj.metadata.name ?? ''
  if (field === 'metadata.namespace') return obj.metadata.namespace ?? ''
  const getter = r.strategy.fields?.[field]
  if (!getter) throw kubeStatus.badRequest(`field label not supported: ${field}`)
  return getter(obj)
}

/** Checks field labels up front, so an unsupported one fails even on an empty list. */
export function checkFieldLabels(r: Resource, fields: FieldRequirement[]): void {
  for (const f of fields)
    if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace' && !r.strategy.fields?.[f.field])
      throw kubeStatus.badRequest(`field label not supported: ${f.field}`)
}

/** The verbs a resource serves, as discovery lists them. */
export const verbsOf = (r: Resource): string[] => r.strategy.verbs ?? ALL_VERBS
