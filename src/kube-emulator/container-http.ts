/**
 * What listens on an emulated container's declared TCP `containerPort`s: a small HTTP/1.1 server
 * that answers every path saying which pod and container answered (a page for browsers, a line of
 * text otherwise) and `/healthz` with `ok`. Port-forward feeds one instance per forwarded
 * connection with the client's bytes; it keeps the connection for further requests unless told
 * to close, and closes after a request it cannot read.
 */
import { isObject, type KubeObject } from '../kube'
import { fieldAt } from './strategies'

/** The container listening on a port. */
export interface Listener {
  pod: string
  namespace: string
  container: string
  image: string
  port: number
}

/** Bytes from the client to the container's socket. */
export interface PodConnection {
  write(bytes: Uint8Array): void
  /** The client will send nothing more (it closed its side). */
  end(): void
}

/** Where the container's side of a connection goes. */
export interface ConnectionSink {
  data(bytes: Uint8Array): void
  /** The container closed the connection. */
  end(): void
}

/** A request head larger than this is refused (431) and the connection closed. */
const MAX_HEAD = 64 * 1024
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz'])

/** The container of `pod` that declares TCP `port`, or undefined when none does (the connection is refused). */
export function listenerOn(pod: KubeObject, port: number): Listener | undefined {
  const containers = fieldAt(pod, ['spec', 'containers'])
  for (const c of Array.isArray(containers) ? containers.filter(isObject) : []) {
    const declared = Array.isArray(c.ports) ? c.ports.filter(isObject) : []
    if (declared.some((p) => p.containerPort === port && (p.protocol ?? 'TCP') === 'TCP'))
      return {
        pod: pod.metadata.name ?? '',
        namespace: pod.metadata.namespace ?? '',
        container: String(c.name),
        image: String(c.image ?? ''),
        port,
      }
  }
  return undefined
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

interface Head {
  method: string
  path: string
  version: string
  headers: Map<string, string>
}

/** Parses a request head (without its blank line); undefined when it is not HTTP/1.x. */
function parseHead(text: string): Head | undefined {
  const [requestLine, ...lines] = text.split('\r\n')
  const m = /^([A-Z]+) (\S+) HTTP\/(1\.[01])$/.exec(requestLine)
  if (!m) return undefined
  const headers = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon <= 0) return undefined
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { method: m[1], path: m[2], version: m[3], headers }
}

/** The body of the answer to `head`: who answered, in the form the client prefers. */
function answer(listener: Listener, head: Head): { status: number; type: string; body: string } {
  const path = head.path.split('?')[0]
  if (HEALTH_PATHS.has(path)) return { status: 200, type: 'text/plain; charset=utf-8', body: 'ok\n' }
  const who = `pod ${listener.pod} (namespace ${listener.namespace}), container ${listener.container} (image ${listener.image}), port ${listener.port}`
  if (!(head.headers.get('accept') ?? '').includes('text/html'))
    return { status: 200, type: 'text/plain; charset=utf-8', body: `${who} answered ${head.method} ${head.path}\n` }
  const title = escapeHtml(`${listener.pod}/${listener.container}`)
  const body = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1><p>${escapeHtml(who)} answered ${escapeHtml(`${head.method} ${head.path}`)}.</p>
<p>An emulated container of the platform's sandbox cluster. <a href="/healthz">/healthz</a></p></body></html>
`
  return { status: 200, type: 'text/html; charset=utf-8', body }
}

const REASONS: Record<number, string> = { 200: 'OK', 400: 'Bad Request', 431: 'Request Header Fields Too Large', 501: 'Not Implemented' }

/** A connection to `listener`: requests in through `write`, answers out through `sink`. */
export function connectHttp(listener: Listener, sink: ConnectionSink): PodConnection {
  let buffered: Uint8Array = new Uint8Array(0)
  /** Body bytes of the current request still to skip. */
  let skipping = 0
  let closed = false
  let ended = false
  const encoder = new TextEncoder()

  const respond = (status: number, type: string, body: string, keepAlive: boolean, headOnly = false) => {
    const bytes = encoder.encode(body)
    const head = [
      `HTTP/1.1 ${status} ${REASONS[status]}`,
      `Content-Type: ${type}`,
      `Content-Length: ${bytes.length}`,
      `Date: ${new Date().toUTCString()}`,
      'Server: kube-emulator',
      `Connection: ${keepAlive ? 'keep-alive' : 'close'}`,
      '',
      '',
    ].join('\r\n')
    sink.data(headOnly ? encoder.encode(head) : Buffer.concat([encoder.encode(head), bytes]))
    if (!keepAlive) close()
  }
  const close = () => {
    if (closed) return
    closed = true
    buffered = new Uint8Array(0)
    sink.end()
  }
  /** Answers every complete request buffered so far. */
  const serve = () => {
    while (!closed) {
      if (skipping > 0) {
        const n = Math.min(skipping, buffered.length)
        skipping -= n
        buffered = buffered.subarray(n)
        if (skipping > 0) return
      }
      const end = Buffer.from(buffered.buffer, buffered.byteOffset, buffered.length).indexOf('\r\n\r\n')
      if (end < 0) {
        if (buffered.length > MAX_HEAD) respond(431, 'text/plain', 'request head too large\n', false)
        else if (ended) close()
        return
      }
      const head = parseHead(new TextDecoder().decode(buffered.subarray(0, end)))
      buffered = buffered.subarray(end + 4)
      if (!head) return respond(400, 'text/plain', 'not an HTTP/1.x request\n', false)
      if (head.headers.has('transfer-encoding'))
        return respond(501, 'text/plain', 'request bodies in chunked transfer encoding are not supported here\n', false)
      const length = Number(head.headers.get('content-length') ?? 0)
      if (!Number.isSafeInteger(length) || length < 0) return respond(400, 'text/plain', 'invalid Content-Length\n', false)
      skipping = length
      const connection = (head.headers.get('connection') ?? '').toLowerCase()
      const keepAlive = !ended && (head.version === '1.1' ? connection !== 'close' : connection === 'keep-alive')
      const { status, type, body } = answer(listener, head)
      respond(status, type, body, keepAlive, head.method === 'HEAD')
    }
  }
  return {
    write(bytes) {
      if (closed) return
      buffered = buffered.length ? Buffer.concat([buffered, bytes]) : bytes
      serve()
    },
    end() {
      ended = true
      serve()
    },
  }
}
