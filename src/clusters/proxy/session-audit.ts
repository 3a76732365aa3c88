import { auditStreamOpened } from '../../audit/recorder'
import type { ClientWebSocket } from '../../net/websocket'

/** The exec and attach protocols (v4, v5, base64): their channel 3 carries the session's final Status. */
const CHANNEL_PROTOCOL = /(^|\.)channel\.k8s\.io$/
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
 * Records the relayed session of the current request (docs/decisions.md §8): its event is
 * written as it opens, and completed with the end time, and an exec's or attach's exit code,
 * when the member's side closes.
 */
export function auditSession(upstream: ClientWebSocket): void {
  const stream = auditStreamOpened()
  if (!stream) return
  let exitCode: number | undefined
  if (CHANNEL_PROTOCOL.test(upstream.protocol))
    upstream.addEventListener('message', (event) => {
      exitCode = exitCodeOf(event.data) ?? exitCode
    })
  upstream.addEventListener('close', () => stream.ended(exitCode), { once: true })
}
