import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { tempDir } from '../support/app'
import { stopWithScope } from '../support/children'
import { createTokenOnCommandLine, MAIN, startServer } from '../support/process'
import { eventually } from '../support/wait'

/**
 * Two real `serve` processes on one data dir, as `serve --workers 2` or two machines on one database
 * run them, and an agent connected to one of them: the other answers for the agent cluster too, through
 * the peer relay of the process holding the tunnel.
 */

const dataDir = tempDir()
const a = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
const b = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1' })
const member = await startEmulator({ tls: true })
afterAll(async () => {
  for (const server of [a, b]) server.child.kill('SIGTERM')
  await Promise.all([a.child.exited, b.child.exited, member.stop()])
})
const token = createTokenOnCommandLine(dataDir, 'admin')
const call = (server: { base: string }, method: string, path: string, body?: unknown) =>
  fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

test('an agent connected to process A → process B answers for its cluster too (reads, writes, a watch)', async () => {
  const connected = await call(a, 'POST', '/api/v1/clustersv2/admin/connect', { name: 'edge' })
  expect(connected.status).toBe(201)
  const agentToken = ((await connected.json()) as { token: string }).token
  const kubeconfig = join(dataDir, 'member.kubeconfig')
  writeFileSync(kubeconfig, member.kubeconfig())
  stopWithScope(
    Bun.spawn([process.execPath, MAIN, 'agent', '--server', a.base, '--kubeconfig', kubeconfig], {
      env: { ...process.env, PLATFORM_AGENT_TOKEN: agentToken },
      stdout: 'ignore',
      stderr: 'ignore',
    }),
  )
  const statusOn = async (server: { base: string }) =>
    (
      (await (await call(server, 'GET', '/api/v1/clustersv2/admin/edge')).json()) as {
        status: { phase: string; agent: { connected: boolean } }
      }
    ).status
  // B learns of A's tunnel from the database, and of the connection the agent reported once its caches follow
  // the commit (within 1 s on libSQL, where they follow the clock: docs/operations.md).
  await eventually(async () => (await statusOn(b)).agent.connected, 15_000)
  await eventually(async () => (await call(b, 'GET', '/api/v1/clusters/admin/edge/k8s/version')).status === 200, 5_000)
  for (const server of [b, a]) {
    const res = await call(server, 'GET', '/api/v1/clusters/admin/edge/k8s/api/v1/namespaces/kube-system')
    expect(res.status).toBe(200)
    expect(((await res.json()) as { metadata: { name: string } }).metadata.name).toBe('kube-system')
  }
  const created = await call(b, 'POST', '/api/v1/clusters/admin/edge/k8s/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'made-through-b' },
  })
  expect(created.status).toBe(201)
  const watch = await call(
    b,
    'GET',
    '/api/v1/clusters/admin/edge/k8s/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dmade-through-b',
  )
  const first = await watch.body!.getReader().read()
  expect(new TextDecoder().decode(first.value)).toContain('"made-through-b"')
  await watch.body?.cancel().catch(() => undefined)
  expect((await statusOn(b)).phase).toBe('Active')
}, 60_000)
