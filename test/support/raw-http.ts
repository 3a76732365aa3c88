import net from 'node:net'

/**
 * Writes `payload` (raw HTTP/1.1 bytes, in one write) to the server at `base` and resolves with
 * every byte it answered once it closes the connection (end the last request with
 * `Connection: close` where the server should answer it).
 */
export function rawExchange(base: string, payload: string): Promise<string> {
  const url = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(payload))
    let answered = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      answered += chunk
    })
    socket.on('close', () => resolve(answered))
    socket.on('error', reject)
  })
}

/** The status lines of the answers in `raw`, in order. */
export const statusLines = (raw: string) => raw.match(/^HTTP\/1\.1 \d{3}[^\r]*/gm) ?? []

/** One raw request: the request line, `headers` and a Content-Length for `body`. */
export function rawRequest(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}
