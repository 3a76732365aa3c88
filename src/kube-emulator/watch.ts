/**
 * Watch streams: newline-delimited JSON events over a chunked 200 response. Events come from the
 * registry's history (so `resourceVersion=N` resumes exactly) and then live; selector transitions
 * turn into ADDED/DELETED as on a real server; errors after the 200 arrive in-band as ERROR events.
 */
import { type KubeObject, kubeStatus } from '../kube'
import type { ListOptions, Registry, Resource, StoreEvent } from './registry'

export interface WatchOptions extends ListOptions {
  namespace: string
  /** Unset or '0': synthetic ADDED events for current objects first. */
  resourceVersion?: string
  allowBookmarks: boolean
  sendInitialEvents?: boolean
  timeoutSeconds?: number
  bookmarkIntervalMs: number
  /** How long a watch from a resourceVersion the store has not reached waits for it before ERROR 504. */
  tooLargeResourceVersionWaitMs: number
  /** Renders a stored object for the client: its version's apiVersion and kind, or a one-row Table. */
  present: (obj: KubeObject) => unknown
  apiVersion: string
}

const MAX_TIMER_MS = 2 ** 31 - 1

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/** Validates the resourceVersion before the 200 goes out; throws badRequest. */
function parseWatchVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined
  const n = Number(rv)
  if (!Number.isInteger(n) || n < 0) throw kubeStatus.badRequest(`invalid resource version: ${rv}`)
  return n
}

/** What an event looks like through this watch's selectors, or undefined when it is not visible. */
function translate(
  registry: Registry,
  r: Resource,
  e: StoreEvent,
  o: WatchOptions,
): { type: WatchEventType; object: KubeObject } | undefined {
  if (e.resource.group !== r.group || e.resource.resource !== r.resource) return undefined
  if (o.namespace && r.strategy.namespaced && e.object.metadata.namespace !== o.namespace) return undefined
  const now = registry.matches(r, e.object, o)
  if (e.type !== 'MODIFIED') return now ? { type: e.type, object: e.object } : undefined
  const before = e.previous ? registry.matches(r, e.previous, o) : true
  if (now && before) return { type: 'MODIFIED', object: e.object }
  if (now) return { type: 'ADDED', object: e.object }
  if (before) return { type: 'DELETED', object: e.object }
  return undefined
}

/** The body of a watch response. Cancelling it (client gone) releases the subscription and timers. */
export function watchStream(registry: Registry, r: Resource, o: WatchOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const from = parseWatchVersion(o.resourceVersion)
  let cleanup = () => {}
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false
      let sent = false
      const send = (type: WatchEventType, object: unknown) => {
        if (closed) return
        sent = true
        try {
          controller.enqueue(encoder.encode(`${JSON.stringify({ type, object })}\n`))
        } catch {
          finish()
        }
      }
      const heartbeat = () => {
        if (closed) return
        try {
          controller.enqueue(encoder.encode('\n'))
        } catch {
          finish()
        }
      }
      const bookmark = (annotations?: Record<string, string>) =>
        send('BOOKMARK', {
          kind: r.strategy.kind,
          apiVersion: o.apiVersion,
          metadata: { resourceVersion: registry.currentResourceVersion(), ...(annotations ? { annotations } : {}) },
        })
      let waitingForStore: ReturnType<typeof setTimeout> | undefined
      const deliver = (e: StoreEvent) => {
        if (waitingForStore && e.rv >= from!) {
          clearTimeout(waitingForStore)
          waitingForStore = undefined
        }
        if (from !== undefined && e.rv <= from) return
        const t = translate(registry, r, e, o)
        if (t) send(t.type, o.present(t.object))
      }
      const unsubscribe = registry.subscribe(deliver)
      const timers: ReturnType<typeof setTimeout>[] = []
      function finish() {
        if (closed) return
        closed = true
        unsubscribe()
        timers.forEach(clearTimeout)
        try {
          controller.close()
        } catch {
          /* already closed by the client */
        }
      }
      cleanup = finish
      if (from === undefined) {
        for (const obj of registry.list(r, o.namespace, o).items) send('ADDED', o.present(obj))
        if (o.sendInitialEvents) bookmark({ 'k8s.io/initial-events-end': 'true' })
      } else {
        // A resourceVersion the store has not reached (one kept from before a restart of the
        // in-memory emulator) waits for it as the apiserver's watch cache does, then ends in a 504
        // that client-go answers by relisting; the wait also paces clients that just re-watch.
        if (from > Number(registry.currentResourceVersion())) {
          waitingForStore = setTimeout(() => {
            waitingForStore = undefined
            send('ERROR', kubeStatus.tooLargeResourceVersion(from, Number(registry.currentResourceVersion())).status)
            finish()
          }, o.tooLargeResourceVersionWaitMs)
          timers.push(waitingForStore)
        }
        const past = registry.eventsSince(from)
        if (past === 'expired') {
          const err = kubeStatus.expired(`too old resource version: ${from} (${registry.oldestResourceVersion()})`)
          send('ERROR', err.status)
          finish()
          return
        }
        past.forEach(deliver)
      }
      // Bun sends response headers with the first chunk; a bare newline (which JSON stream
      // decoders skip) lets clients see the 200 before any event exists.
      if (!sent) heartbeat()
      // Keep-alive: a BOOKMARK when the client allows them, otherwise a bare newline that every
      // JSON stream decoder skips, so idle timers of proxies in between never see a silent stream.
      // No BOOKMARK while waiting for the store: its resourceVersion would be older than the one asked for.
      timers.push(setInterval(() => (o.allowBookmarks && !waitingForStore ? bookmark() : heartbeat()), o.bookmarkIntervalMs))
      // Timers overflow past 2^31-1 ms and would fire at once; longer timeouts are as good as none.
      if (o.timeoutSeconds && o.timeoutSeconds > 0) timers.push(setTimeout(finish, Math.min(o.timeoutSeconds * 1000, MAX_TIMER_MS)))
    },
    cancel() {
      cleanup()
    },
  })
}
