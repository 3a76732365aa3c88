/**
 * Subresource handlers, one per name a strategy can declare in `subresources`: status, scale,
 * log, exec, attach and portforward. Discovery lists them from the same table, so serving and
 * advertising never differ.
 */
import { isObject, type KubeObject, kubeStatus, type StatusCause } from '../../kube'
import { prepareAttach } from '../attach'
import type { Call, WebSocketSession } from '../context'
import { serviceResolver } from '../controllers/services'
import { prepareExec } from '../exec'
import { podLogs } from '../logs'
import { applyPatch } from '../patch'
import { preparePortForward } from '../portforward'
import type { Resource } from '../registry'
import { formatLabels } from '../selectors'
import { fieldAt, type ScaleSpec, type Subresources } from '../strategies'
import { parsePatch, patchStored } from './patch'
import { dryRunQuery, json, present, readBody, readObject } from './request'

export interface SubresourceHandler {
  /** Verbs as discovery lists them. */
  verbs: string[]
  /** Kind (and group/version) of the subresource's body, when not the parent's. */
  kind?: string
  groupVersion?: { group: string; version: string }
  /** Undefined when the request was upgraded to a WebSocket. */
  serve(call: Call): Promise<Response | undefined> | Response | undefined
}

const notSupported = (r: Resource, sub: string, verb: string) =>
  kubeStatus.methodNotSupported({ group: r.group, resource: `${r.resource}/${sub}` }, verb)

async function status(call: Call): Promise<Response> {
  const { ctx, req, url, info, r } = call
  const reg = ctx.registry
  const out = (obj: KubeObject) => present(r, info.version, obj)
  if (info.verb === 'get') return json(out(reg.get(r, info.namespace, info.name)))
  const opts = { subresource: 'status' as const, dryRun: dryRunQuery(url.searchParams) }
  if (info.verb === 'update') return json(out(reg.update(r, info.namespace, info.name, await readObject(req, r, info.version), opts)))
  if (info.verb === 'patch') return json(out(await patchStored(call, opts)))
  throw notSupported(r, 'status', info.verb)
}

/** Reads replicas and selector for `/scale` from the paths the strategy names. */
function scaleOf(spec: ScaleSpec, obj: KubeObject) {
  const sel = spec.labelSelectorPath ? fieldAt(obj, spec.labelSelectorPath) : undefined
  const matchLabels = isObject(sel) && isObject(sel.matchLabels) ? (sel.matchLabels as Record<string, string>) : undefined
  const selector = typeof sel === 'string' ? sel : matchLabels ? formatLabels(matchLabels) : ''
  const m = obj.metadata
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: Number(fieldAt(obj, spec.specReplicasPath) ?? 0) },
    status: { replicas: Number(fieldAt(obj, spec.statusReplicasPath) ?? 0), ...(selector ? { selector } : {}) },
  }
}

/**
 * `/scale` as an autoscaling/v1 Scale over the parent's replicas; writes change the parent. The body
 * is read before the parent, so the read-modify-write below cannot interleave with another write.
 */
async function scale({ ctx, req, url, info, r }: Call): Promise<Response> {
  const reg = ctx.registry
  const spec = r.strategy.subresources!.scale!
  if (info.verb === 'get') return json(scaleOf(spec, reg.get(r, info.namespace, info.name)))
  if (info.verb !== 'update' && info.verb !== 'patch') throw notSupported(r, 'scale', info.verb)
  const dryRun = dryRunQuery(url.searchParams)
  const replacement = info.verb === 'update' ? await readBody(req) : undefined
  const patch = info.verb === 'patch' ? parsePatch(req, await req.text(), true) : undefined
  const current = reg.get(r, info.namespace, info.name)
  const invalid = (causes: StatusCause[]) => kubeStatus.invalid({ group: 'autoscaling', kind: 'Scale' }, info.name, causes)
  const desired = patch
    ? applyPatch(patch.type, scaleOf(spec, current), patch.patch, (m) =>
        invalid([{ reason: 'FieldValueInvalid', message: m, field: 'patch' }]),
      )
    : replacement
  const replicas = fieldAt(desired, ['spec', 'replicas'])
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw invalid([
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
        field: 'spec.replicas',
      },
    ])
  const rv = fieldAt(desired, ['metadata', 'resourceVersion'])
  const next = structuredClone(current)
  let cursor: Record<string, unknown> = next
  const path = spec.specReplicasPath
  for (const key of path.slice(0, -1)) cursor = (isObject(cursor[key]) ? cursor[key] : (cursor[key] = {})) as Record<string, unknown>
  cursor[path[path.length - 1]] = replicas
  next.metadata.resourceVersion = typeof rv === 'string' && rv ? rv : current.metadata.resourceVersion
  return json(scaleOf(spec, reg.update(r, info.namespace, info.name, next, { dryRun })))
}

function log({ ctx, req, url, info, r, server }: Call): Response {
  server.timeout(req, 0)
  return podLogs(ctx.registry, r, info, url.searchParams, { intervalMs: ctx.logIntervalMs, now: ctx.clock }, ctx.outputs, req.signal)
}

/**
 * Upgrades a connect request (exec, attach, portforward) to the WebSocket session `prepare` makes
 * from the pod, the query and the offered subprotocols. As the apiserver does, the pod, the container
 * and the options are checked first (a missing pod is 404 with or without an upgrade), then the
 * upgrade is required; every check fails as a plain HTTP Status answer.
 */
function upgrade(
  { ctx, req, url, info, r, server }: Call,
  prepare: (pod: KubeObject, q: URLSearchParams, offered: string[]) => { session: WebSocketSession; protocol: string },
): undefined {
  const pod = ctx.registry.get(r, info.namespace, info.name)
  const offered = (req.headers.get('sec-websocket-protocol') ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const { session, protocol } = prepare(pod, url.searchParams, offered)
  if ((req.headers.get('upgrade') ?? '').toLowerCase() !== 'websocket') throw kubeStatus.badRequest('Upgrade request required')
  // Bun echoes the client's first offer unless told otherwise, so the choice is always explicit.
  const headers = protocol ? { 'Sec-WebSocket-Protocol': protocol } : undefined
  if (server.upgrade(req, { data: session, headers })) return undefined
  throw kubeStatus.badRequest('Upgrade request required')
}

const exec = (call: Call) =>
  upgrade(call, (pod, q, offered) =>
    prepareExec(pod, q, offered, (container) => ({
      fs: call.ctx.filesystems.of(pod.metadata.uid ?? '', container, pod.metadata.name ?? ''),
      lookupService: serviceResolver(call.ctx.registry, call.info.namespace),
      startDelayMs: call.ctx.execStartDelayMs,
    })),
  )

const attach = (call: Call) =>
  upgrade(call, (pod, q, offered) => {
    const { ctx, info, r } = call
    const podExists = () => {
      try {
        return ctx.registry.get(r, info.namespace, info.name).metadata.uid === pod.metadata.uid
      } catch {
        return false
      }
    }
    const clock = { intervalMs: ctx.logIntervalMs, now: ctx.clock }
    return prepareAttach(pod, q, offered, { clock, outputs: ctx.outputs, podExists, startDelayMs: ctx.execStartDelayMs })
  })

const portforward = (call: Call) => upgrade(call, preparePortForward)

/** Every subresource a strategy may declare, by name. */
export const SUBRESOURCES: Record<keyof Subresources, SubresourceHandler> = {
  status: { verbs: ['get', 'patch', 'update'], serve: status },
  scale: { verbs: ['get', 'patch', 'update'], kind: 'Scale', groupVersion: { group: 'autoscaling', version: 'v1' }, serve: scale },
  log: { verbs: ['get'], serve: log },
  exec: { verbs: ['create', 'get'], kind: 'PodExecOptions', serve: exec },
  attach: { verbs: ['create', 'get'], kind: 'PodAttachOptions', serve: attach },
  portforward: { verbs: ['create', 'get'], kind: 'PodPortForwardOptions', serve: portforward },
}

/** The subresources `r` declares, in discovery order. */
export const declaredSubresources = (r: Resource): (keyof Subresources)[] =>
  (Object.keys(SUBRESOURCES) as (keyof Subresources)[]).filter((name) => r.strategy.subresources?.[name] !== undefined)
