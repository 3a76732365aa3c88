// The runtime's floor for the proxy bench: a Bun server relaying every request to the member over
// the same member client as the platform (src/clusters/member/client.ts), with no credential
// check, no authorization, no path or header checks. What is left between this and nginx is the
// cost of Bun's HTTP server and TLS client themselves; what is left between the platform and this
// is the platform's own work. Not a proxy anyone should run: the bench starts it on loopback.
// Usage (by bench/proxy.ts): PORT=N bun bench/bare-relay.ts; reads MEMBER_KUBECONFIG; several share PORT
// (reusePort); prints its port.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDeps } from '../src/app'
import { connectionFromKubeconfig } from '../src/clusters/connection'
import { callMember } from '../src/clusters/member/client'
import { loadConfig } from '../src/config'

const member = { name: 'bench', connection: connectionFromKubeconfig(process.env.MEMBER_KUBECONFIG ?? '') }
// The member client's state and egress policy come with an app's Deps; the database is never used.
const deps = await openDeps(
  loadConfig({ PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-bare-relay-')), PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' }),
)
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  reusePort: true,
  async fetch(request) {
    const url = request.url
    const answer = await callMember(deps, member, {
      method: request.method,
      path: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      timeoutMs: 30_000,
    })
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': answer.headers['content-type'] ?? 'application/json' },
    })
  },
})
console.log(server.port)
