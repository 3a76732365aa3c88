/** A WebSocket speaking a Kubernetes channel protocol (exec, attach, port-forward), as a test drives it. */

interface ChannelFrame {
  channel: number
  text: string
}

/** A WebSocket speaking a channel protocol: every frame received, decoded, in order. */
export interface ChannelSession {
  ws: WebSocket
  frames: ChannelFrame[]
  /** The same frames' payloads as bytes. */
  payloads: Uint8Array[]
  closed: Promise<number>
  send(channel: number, data: string | number[] | Uint8Array): void
  /** Resolves once `check` holds, checked as frames arrive; rejects if the socket closes first. */
  until(check: () => boolean): Promise<void>
}

/**
 * Opens a channel-protocol WebSocket to `url` offering `protocols`, with `headers` (the credential)
 * and trusting `ca`; collects frames until the server closes.
 */
export async function openChannelSocket(
  url: string,
  protocols: string[],
  headers: Record<string, string>,
  ca?: string,
): Promise<ChannelSession> {
  // Bun's WebSocket takes an options object (protocols, headers, tls); the DOM typings only know string[].
  const options = { protocols, headers, tls: { ca } }
  const ws = new WebSocket(url, options as unknown as string[])
  ws.binaryType = 'arraybuffer'
  const frames: ChannelFrame[] = []
  const payloads: Uint8Array[] = []
  const base64 = () => ws.protocol.includes('base64')
  let waiters: { check: () => boolean; resolve: () => void; reject: (e: Error) => void }[] = []
  const settle = (ended: boolean) => {
    waiters = waiters.filter((w) => {
      if (w.check()) w.resolve()
      else if (ended) w.reject(new Error('the socket closed first'))
      else return true
      return false
    })
  }
  ws.onmessage = (m) => {
    const bytes =
      typeof m.data === 'string'
        ? new Uint8Array([m.data.charCodeAt(0) - 48, ...Buffer.from(m.data.slice(1), 'base64')])
        : new Uint8Array(m.data)
    frames.push({ channel: bytes[0], text: new TextDecoder().decode(bytes.subarray(1)) })
    payloads.push(bytes.subarray(1))
    settle(false)
  }
  const closed = new Promise<number>((resolve) => {
    ws.onclose = (e) => {
      resolve(e.code)
      settle(true)
    }
  })
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error('upgrade failed'))
  })
  return {
    ws,
    frames,
    payloads,
    closed,
    send(channel, data) {
      const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data)
      if (base64()) ws.send(`${String.fromCharCode(48 + channel)}${Buffer.from(bytes).toString('base64')}`)
      else ws.send(Buffer.concat([Uint8Array.of(channel), bytes]))
    },
    until: (check) => (check() ? Promise.resolve() : new Promise<void>((resolve, reject) => waiters.push({ check, resolve, reject }))),
  }
}

/** Everything received on `channel` so far, as text. */
export const channelText = (s: ChannelSession, channel = 1) =>
  s.frames
    .filter((f) => f.channel === channel)
    .map((f) => f.text)
    .join('')
