/**
 * Pod logs: every running container prints a few boot lines, then one synthetic line per `intervalMs`,
 * computed from the clock rather than stored, so logs grow forever at no memory cost. Options and
 * error messages follow the kubelet's (`container`, `follow`, `tailLines`, `sinceSeconds`, …).
 */
import { isObject, type KubeObject, kubeStatus } from '../kube'
import type { ContainerOutputs, LogLine } from './container-output'
import type { RequestInfo } from './context'
import type { Registry, Resource } from './registry'
import { fieldAt } from './strategies'

/** Lines older than this many intervals have been "rotated away". */
const RETAINED_LINES = 5000
/** What every container prints when it starts, all at its start time. */
const BOOT = ['starting', 'loaded configuration from /app/config.yaml', 'listening on :8080', 'ready to serve requests']
const PATHS = ['/', '/healthz', '/api/items', '/api/items/42', '/static/app.js', '/login', '/api/orders']
const STATUSES = [200, 200, 200, 200, 201, 304, 404, 200, 500]

/** The container names of a pod (regular, then init). */
function containerNames(pod: KubeObject, field: 'containers' | 'initContainers' = 'containers'): string[] {
  const list = fieldAt(pod, ['spec', field])
  return Array.isArray(list) ? list.filter(isObject).map((c) => String(c.name)) : []
}

/** Picks the container a log or exec request means; throws the kubelet's 400s. */
export function chooseContainer(pod: KubeObject, requested: string | null): string {
  const names = containerNames(pod)
  const init = containerNames(pod, 'initContainers')
  const podName = pod.metadata.name ?? ''
  if (!requested) {
    if (names.length === 1) return names[0]
    const initPart = init.length ? ` or one of the init containers: [${init.join(' ')}]` : ''
    throw kubeStatus.badRequest(`a container name must be specified for pod ${podName}, choose one of: [${names.join(' ')}]${initPart}`)
  }
  if (!names.includes(requested) && !init.includes(requested))
    throw kubeStatus.badRequest(`container ${requested} is not valid for pod ${podName}`)
  return requested
}

/** When the container started running, or undefined while it waits. */
export function containerStartedAt(pod: KubeObject, container: string): number | undefined {
  const statuses = fieldAt(pod, ['status', 'containerStatuses'])
  const status = Array.isArray(statuses) ? statuses.filter(isObject).find((s) => s.name === container) : undefined
  const started = fieldAt(status, ['state', 'running', 'startedAt'])
  return typeof started === 'string' ? Date.parse(started) : undefined
}

function lineText(pod: KubeObject, container: string, seq: number): string {
  if (seq < BOOT.length) return `level=info pod=${pod.metadata.name} container=${container} seq=${seq} msg="${BOOT[seq]}"`
  const path = PATHS[(seq * 3 + container.length) % PATHS.length]
  const status = STATUSES[(seq * 5 + 3) % STATUSES.length]
  const level = status >= 500 ? 'error' : 'info'
  return `level=${level} pod=${pod.metadata.name} container=${container} seq=${seq} msg="GET ${path}" status=${status} duration=${((seq * 13) % 90) + 2}ms`
}

/** RFC3339 with nanoseconds, as the kubelet prefixes lines under `timestamps=true`. */
const nanoTimestamp = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z')

interface LogQuery {
  tailLines?: number
  sinceMs?: number
  timestamps: boolean
  limitBytes?: number
  follow: boolean
}

function positiveInt(q: URLSearchParams, key: string, min: number): number | undefined {
  const v = q.get(key)
  if (v === null) return undefined
  const n = Number(v)
  if (v.trim() === '' || !Number.isInteger(n) || n < min)
    throw kubeStatus.invalid({ group: '', kind: 'PodLogOptions' }, '', [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${v}: must be greater than ${min === 0 ? 'or equal to 0' : 'zero'}`,
        field: key,
      },
    ])
  return n
}

function parseQuery(q: URLSearchParams, now: number): LogQuery {
  const flag = (k: string) => q.has(k) && q.get(k) !== 'false' && q.get(k) !== '0'
  const sinceSeconds = positiveInt(q, 'sinceSeconds', 1)
  const sinceTime = q.get('sinceTime')
  if (sinceSeconds !== undefined && sinceTime)
    throw kubeStatus.invalid({ group: '', kind: 'PodLogOptions' }, '', [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
        field: 'sinceSeconds',
      },
    ])
  const sinceParsed = sinceTime ? Date.parse(sinceTime) : undefined
  if (sinceParsed !== undefined && Number.isNaN(sinceParsed)) throw kubeStatus.badRequest(`invalid sinceTime: ${sinceTime}`)
  return {
    tailLines: positiveInt(q, 'tailLines', 0),
    sinceMs: sinceSeconds !== undefined ? now - sinceSeconds * 1000 : sinceParsed,
    timestamps: flag('timestamps'),
    limitBytes: positiveInt(q, 'limitBytes', 1),
    follow: flag('follow'),
  }
}

/** How the synthetic log advances: a line per `intervalMs` of `now` (the emulator's clock). */
export interface LogClock {
  intervalMs: number
  now: () => number
}

/** Where a container's lines come from: the synthetic clock-driven log, or a finished-or-running command's captured output. */
export interface LineSource {
  /** The lines are a command's captured output (which grows as it runs), not the synthetic log. */
  captured: boolean
  /** How many lines exist now. */
  written(): number
  line(seq: number): LogLine
  /** The first line at or after `since`. */
  firstSince(since: number): number
  /** No line will be added any more. */
  done(): boolean
}

/** Boot lines carry the start time; request line k (seq BOOT.length + k) comes k+1 intervals later. */
function syntheticSource(pod: KubeObject, container: string, started: number, { intervalMs, now }: LogClock): LineSource {
  return {
    captured: false,
    written: () => BOOT.length + Math.floor((now() - started) / intervalMs),
    line: (seq) => ({ time: started + Math.max(0, seq - BOOT.length + 1) * intervalMs, text: lineText(pod, container, seq) }),
    firstSince: (since) => (since <= started ? 0 : BOOT.length - 1 + Math.ceil((since - started) / intervalMs)),
    done: () => false,
  }
}

function capturedSource(captured: { lines: readonly LogLine[]; done: boolean }): LineSource {
  return {
    captured: true,
    written: () => captured.lines.length,
    line: (seq) => captured.lines[seq],
    firstSince: (since) => {
      const i = captured.lines.findIndex((l) => l.time >= since)
      return i < 0 ? captured.lines.length : i
    },
    done: () => captured.done,
  }
}

/** The lines of `container`, or undefined while it waits to start. */
export function lineSourceOf(pod: KubeObject, container: string, clock: LogClock, outputs: ContainerOutputs): LineSource | undefined {
  const captured = outputs.read(pod.metadata.uid ?? '', container)
  if (captured) return capturedSource(captured)
  const started = containerStartedAt(pod, container)
  return started === undefined ? undefined : syntheticSource(pod, container, started, clock)
}

/** How often a follower looks for new lines: captured output promptly, the synthetic log once per line (at most a second). */
export const followIntervalMs = (source: LineSource, clock: LogClock) => Math.min(clock.intervalMs, source.captured ? 100 : 1000)

/**
 * GET pods/{name}/log: plain text, or a chunked stream under `follow` that ends when the client
 * leaves, the pod goes or (for a command that ran to completion) its output ended.
 */
export function podLogs(
  reg: Registry,
  r: Resource,
  info: RequestInfo,
  q: URLSearchParams,
  clock: LogClock,
  outputs: ContainerOutputs,
  signal: AbortSignal,
): Response {
  if (info.verb !== 'get') throw kubeStatus.methodNotSupported({ group: '', resource: 'pods/log' }, info.verb)
  const pod = reg.get(r, info.namespace, info.name)
  const container = chooseContainer(pod, q.get('container'))
  if (q.get('previous') === 'true')
    throw kubeStatus.badRequest(`previous terminated container "${container}" in pod "${info.name}" not found`)
  const opts = parseQuery(q, clock.now())
  const source = lineSourceOf(pod, container, clock, outputs)
  if (!source) throw kubeStatus.badRequest(`container "${container}" in pod "${info.name}" is waiting to start: ContainerCreating`)
  const format = (seq: number) => {
    const { time, text } = source.line(seq)
    return `${opts.timestamps ? `${nanoTimestamp(time)} ` : ''}${text}\n`
  }
  let first = Math.max(0, source.written() - RETAINED_LINES)
  if (opts.sinceMs !== undefined) first = Math.max(first, source.firstSince(opts.sinceMs))
  let next = source.written()
  if (opts.tailLines !== undefined) first = Math.max(first, next - opts.tailLines)
  const initial = Array.from({ length: Math.max(0, next - first) }, (_, i) => format(first + i)).join('')
  const headers = { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache' }
  let budget = opts.limitBytes ?? Number.POSITIVE_INFINITY
  const cut = (text: string) => {
    const out = text.slice(0, budget)
    budget -= out.length
    return out
  }
  if (!opts.follow) return new Response(cut(initial), { headers })
  const encoder = new TextEncoder()
  let timer: ReturnType<typeof setInterval> | undefined
  let closed = false
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = () => {
        if (closed) return
        closed = true
        clearInterval(timer)
        try {
          controller.close()
        } catch {
          /* client already gone */
        }
      }
      const push = (text: string) => {
        const out = cut(text)
        if (out && !closed) controller.enqueue(encoder.encode(out))
        if (budget <= 0) stop()
      }
      const drain = () => {
        const upTo = source.written()
        let text = ''
        for (; next < upTo; next++) text += format(next)
        push(text)
        if (source.done()) stop()
      }
      push(initial)
      if (closed) return
      if (source.done()) {
        stop()
        return
      }
      signal.addEventListener('abort', stop)
      timer = setInterval(
        () => {
          try {
            reg.get(r, info.namespace, info.name)
          } catch {
            stop()
            return
          }
          drain()
        },
        followIntervalMs(source, clock),
      )
    },
    cancel() {
      closed = true
      clearInterval(timer)
    },
  })
  return new Response(body, { headers })
}
