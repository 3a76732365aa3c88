import { auditCreatedName, auditStreamOpened } from '../../audit/recorder'
import type { ClientWebSocket } from '../../net/websocket'
import { mediaTypeOf } from './relay'

/**
 * The channel protocols (v4, v5, base64): an exec's or attach's channel 3 carries the session's final
 * Status; a port-forward speaks them too, but its channel 3 is the second port's error stream.
 */
const CHANNEL_PROTOCOL = /(^|\.)channel\.k8s\.io$/
/** The sessions that end with an exit status. */
const EXIT_STATUS_SUBRESOURCES = new Set(['exec', 'attach'])
const STATUS_CHANNEL = 3

/**
 * The exit code in an exec's final Status (channel 3, JSON; base64 in text frames): 0 on
 * Success, the `ExitCode` cause of a NonZeroExitCode failure, else undefined. Only that channel
 * is looked at: what stdin, stdout and stderr carry is never read.
 */
function exitCodeOf(frame: unknown): number | undefined {
  let json: string
  if (typeof frame === 'string') {
    if (frame[0] !== String(STATUS_CHANNEL)) return undefined
    json = Buffer.from(frame.slice(1), 'base64').toString()
  } else {
    const bytes =
      frame instanceof ArrayBuffer
        ? new Uint8Array(frame)
        : ArrayBuffer.isView(frame)
          ? new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength)
          : undefined
    if (bytes?.[0] !== STATUS_CHANNEL) return undefined
    json = new TextDecoder().decode(bytes.subarray(1))
  }
  try {
    const status = JSON.parse(json) as { status?: string; details?: { causes?: { reason?: string; message?: string }[] } }
    if (status.status === 'Success') return 0
    const code = Number(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message)
    return Number.isInteger(code) ? code : undefined
  } catch {
    return undefined
  }
}

/**
 * Records the relayed session of the current request (docs/decisions.md §8) to `subresource`
 * (exec, attach, portforward): its event is written as it opens, and completed with the end time,
 * and an exec's or attach's exit code, when the member's side closes. A port-forward's frames are
 * never read.
 */
export function auditSession(upstream: ClientWebSocket, subresource: string): void {
  const stream = auditStreamOpened()
  if (!stream) return
  let exitCode: number | undefined
  if (EXIT_STATUS_SUBRESOURCES.has(subresource) && CHANNEL_PROTOCOL.test(upstream.protocol))
    upstream.addEventListener('message', (event) => {
      exitCode = exitCodeOf(event.data) ?? exitCode
    })
  upstream.addEventListener('close', () => stream.ended(exitCode), { once: true })
}

/**
 * A create the member accepted (2xx, JSON): the created object's name goes to the request's event
 * (docs/decisions.md §8). Reads a copy of the answer, which the client still gets whole.
 */
export async function auditCreated(answer: Response): Promise<void> {
  if (!answer.ok || mediaTypeOf(answer.headers.get('content-type')) !== 'application/json') return
  const created = (await answer
    .clone()
    .json()
    .catch(() => undefined)) as { metadata?: { name?: unknown } } | undefined
  const name = created?.metadata?.name
  if (typeof name === 'string' && name !== '') auditCreatedName(name)
}
