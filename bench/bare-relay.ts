// The runtime's floor for the proxy bench: a Bun server relaying every request to the member over
// the same kept-alive client as the platform (src/clusters/keepalive.ts), with no credential
// check, no authorization, no path or header checks. What is left between this and nginx is the
// cost of Bun's HTTP server and TLS client themselves; what is left between the platform and this
// is the platform's own work. Not a proxy anyone should run: the bench starts it on loopback.
// Usage (by bench/proxy.ts): bun bench/bare-relay.ts; reads MEMBER_KUBECONFIG, prints its port.
import { connectionFromKubeconfig } from '../src/clusters/connection'
import { finiteRequest } from '../src/clusters/keepalive'

const connection = connectionFromKubeconfig(process.env.MEMBER_KUBECONFIG ?? '')
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const url = request.url
    const answer = await finiteRequest('bench', connection, {
      method: request.method,
      path: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      headers: {},
      body: null,
      timeoutMs: 30_000,
    })
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': answer.headers['content-type'] ?? 'application/json' },
    })
  },
})
console.log(server.port)
