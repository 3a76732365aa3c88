import http from 'node:http'

export interface PlainResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

/**
 * Sends a request from a chosen loopback source address (127.0.0.N are all this machine), so a
 * test can play many clients the way an attacker with many addresses would. fetch cannot bind
 * a source address; node:http can.
 */
export function requestFrom(
  sourceAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PlainResponse> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: init.method ?? 'GET',
        headers: init.headers,
        localAddress: sourceAddress,
        agent: false,
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }))
      },
    )
    request.on('error', reject)
    request.end(init.body)
  })
}

/** POST /api/v1/user/signin from `sourceAddress`, with extra headers (X-Forwarded-For). */
export const signInFrom = (sourceAddress: string, base: string, username: string, password: string, headers: Record<string, string> = {}) =>
  requestFrom(sourceAddress, `${base}/api/v1/user/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username, password }),
  })
